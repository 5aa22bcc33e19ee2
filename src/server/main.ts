// `npm start`: read the configuration, start the BFF (and the embedded emulator when no cluster is
// configured), and shut both down cleanly on Ctrl-C or SIGTERM.
import { ConfigError, detectInCluster, loadConfig } from "./config.ts";
import { startEmbeddedEmulatorFor } from "./embedded-emulator.ts";
import type { RunningServer } from "./start.ts";
import { startupLog } from "./startup-log.ts";

export async function runUntilSignalled(
  start: () => Promise<RunningServer>,
  onStop?: () => Promise<void>,
): Promise<void> {
  let server: RunningServer;
  try {
    server = await start();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down...`);
    await onStop?.();
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

export function readConfigOrExit() {
  try {
    return loadConfig({ env: process.env, inCluster: detectInCluster(process.env) });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

if (import.meta.filename === process.argv[1]) {
  const config = readConfigOrExit();
  // The emulator starts while the rest of the BFF's code loads: a restart is ready in half the time.
  const emulatorStarting =
    config.cluster.kind === "embedded-emulator"
      ? startEmbeddedEmulatorFor(config.cluster, startupLog(config.logLevel))
      : undefined;
  const { startServer } = await import("./start.ts");
  await runUntilSignalled(() => startServer(config, { serveWeb: true, emulator: emulatorStarting }));
}
