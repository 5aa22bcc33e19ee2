// The grading agent's entry point: read the settings, listen, stop cleanly on SIGTERM.
import { ConfigError, loadAgentConfig, usage } from "./config.ts";
import { runAsMismatch } from "./run-as.ts";
import { agentVersion, startAgentServer } from "./server.ts";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help")) {
    console.log(usage);
    return;
  }
  const config = loadAgentConfig(argv, process.env);
  const mismatch = runAsMismatch(config);
  if (mismatch) console.warn(mismatch);

  const agent = await startAgentServer(config);
  // Tests and the emulator's guests read the port from this line: keep its shape.
  console.log(`lab-agent ${agentVersion} listening on ${config.host}:${agent.port}`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void agent.close().then(() => process.exit(0)));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : `lab-agent: ${(error as Error).message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
