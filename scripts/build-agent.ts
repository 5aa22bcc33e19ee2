// Bundles the grading agent into one file that runs on Node 18 or newer with nothing else installed.
import { build } from "esbuild";
import { chmod, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const agentEntry = fileURLToPath(new URL("../src/agent/main.ts", import.meta.url));
export const agentBundle = fileURLToPath(new URL("../dist/agent/lab-agent.mjs", import.meta.url));

export async function buildAgent(outfile = agentBundle): Promise<void> {
  const result = await build({
    entryPoints: [agentEntry],
    outfile,
    bundle: true,
    platform: "node",
    target: "node18",
    format: "esm",
    banner: { js: "#!/usr/bin/env node" },
    metafile: true,
    logLevel: "warning",
  });
  // The guest has Node and nothing else: a package that slipped into the agent must fail the build.
  const packages = Object.keys(result.metafile.inputs).filter((input) => input.includes("node_modules"));
  const externals = Object.values(result.metafile.outputs)
    .flatMap((output) => output.imports)
    .filter((imported) => imported.external && !imported.path.startsWith("node:"))
    .map((imported) => imported.path);
  const foreign = [...packages, ...externals];
  if (foreign.length > 0) {
    throw new Error(`The agent may use Node's built-ins only, but it imports: ${foreign.join(", ")}`);
  }
  await chmod(outfile, 0o755);
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) {
  await buildAgent();
  const { size } = await stat(agentBundle);
  console.log(`built ${agentBundle} (${(size / 1024).toFixed(1)} KiB)`);
}
