// The agent file the BFF delivers to new VMs: dist/agent/lab-agent.mjs. Built at start when it is
// missing or older than the agent's sources, so a fresh checkout (or an edited agent) never hands
// guests a missing or outdated agent. An image ships it built (npm run build): there a failed rebuild
// (no esbuild, read-only filesystem) keeps the file that is there.
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";

export interface AgentBundleOptions {
  /** Writes the bundle to `outfile`; default scripts/build-agent.ts (esbuild, loaded only when needed). */
  build?: (outfile: string) => Promise<void>;
  log?: { info(message: string): void; warn(message: string): void };
}

export const agentBundlePath = "dist/agent/lab-agent.mjs";

export async function loadAgentBundle(
  projectRoot: string,
  options: AgentBundleOptions = {},
): Promise<Buffer> {
  const log = options.log ?? console;
  const bundle = path.join(projectRoot, agentBundlePath);
  const builtAt = await stat(bundle).then(
    (info) => info.mtimeMs,
    () => undefined,
  );
  const newestSource = await newestSourceChange(projectRoot);
  if (builtAt === undefined || newestSource > builtAt) {
    log.info(`Building the grading agent into ${agentBundlePath}...`);
    try {
      await (options.build ?? buildWithEsbuild)(bundle);
    } catch (error) {
      if (builtAt === undefined) {
        throw new Error(
          `The grading agent could not be built (${(error as Error).message}); run npm run build:agent.`,
        );
      }
      log.warn(
        `${agentBundlePath} is older than src/agent but could not be rebuilt (${(error as Error).message}); new VMs get the existing one.`,
      );
    }
  }
  return readFile(bundle);
}

async function buildWithEsbuild(outfile: string): Promise<void> {
  const { buildAgent } = await import("../../../scripts/build-agent.ts");
  await buildAgent(outfile);
}

/** The newest modification time of the agent's sources; 0 when they are not there (an image may omit them). */
async function newestSourceChange(projectRoot: string): Promise<number> {
  const agentDir = path.join(projectRoot, "src/agent");
  const files = await readdir(agentDir, { recursive: true }).catch(() => []);
  const sources = files
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.includes("testing"))
    .map((file) => path.join(agentDir, file));
  sources.push(path.join(projectRoot, "src/common/agent-protocol.ts"));
  const times = await Promise.all(
    sources.map((file) =>
      stat(file).then(
        (info) => info.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Math.max(0, ...times);
}
