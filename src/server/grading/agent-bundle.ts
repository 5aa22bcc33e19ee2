// The agent file the BFF delivers to new VMs: src/agent/lab_agent.py as it is, since Python needs no
// build. Read once at start, so every VM launched by this process gets the same agent.
import { readFile } from "node:fs/promises";
import path from "node:path";

export const agentFilePath = "src/agent/lab_agent.py";

export async function loadAgentFile(projectRoot: string): Promise<Buffer> {
  const file = path.join(projectRoot, agentFilePath);
  try {
    return await readFile(file);
  } catch (error) {
    throw new Error(
      `The grading agent ${agentFilePath} cannot be read (${(error as Error).message}); every VM needs it.`,
    );
  }
}
