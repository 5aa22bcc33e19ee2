// The agent file the BFF delivers to new VMs: lab_agent.py as it is, since Python needs no build.
// It sits two folders up from this module both in the source tree (src/agent) and in the build
// (dist/agent). Read once at start, so every VM launched by this process gets the same agent.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const agentFile = fileURLToPath(new URL("../../agent/lab_agent.py", import.meta.url));

export async function loadAgentFile(file = agentFile): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new Error(
      `The grading agent ${path.relative(process.cwd(), file) || file} cannot be read (${(error as Error).message}); every VM needs it.`,
    );
  }
}
