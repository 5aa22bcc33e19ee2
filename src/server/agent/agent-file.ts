// The agent file the BFF delivers to new VMs: the Python modules of src/agent/lab_agent/ zipped
// into one lab_agent.pyz (python-zipapp.ts), since Python needs no other build. The folder sits two
// folders up from this module both in the source tree (src/agent) and in the build (dist/agent).
// Read once at start, so every VM launched by this process gets the same agent.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { zipApplication } from "../../common/python-zipapp.ts";

export const agentFile = fileURLToPath(new URL("../../agent/lab_agent", import.meta.url));

export async function loadAgentFile(folder = agentFile): Promise<Buffer> {
  try {
    // Its modules only: never a __pycache__ a local run left behind.
    const modules = (await readdir(folder)).filter((name) => name.endsWith(".py")).sort();
    const entries = await Promise.all(
      modules.map(async (name) => ({ name, data: await readFile(path.join(folder, name)) })),
    );
    if (!modules.includes("__main__.py")) throw new Error(`${path.join(folder, "__main__.py")} is missing`);
    return zipApplication(entries);
  } catch (error) {
    throw new Error(
      `The grading agent ${path.relative(process.cwd(), folder) || folder} cannot be read (${(error as Error).message}); every VM needs it.`,
    );
  }
}
