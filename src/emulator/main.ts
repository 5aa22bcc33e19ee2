// `npm run emulator`: runs the emulator in the foreground until Ctrl+C.
import { parseArgs } from "node:util";
import { loadClusterConfig } from "./cluster-config.ts";
import { createEmulator } from "./emulator.ts";

const usage = `Usage: npm run emulator -- [options]
  --host HOST           address to listen on (default 127.0.0.1)
  --port PORT           port, 0 for any free one (default 8443)
  --kubeconfig PATH     kubeconfig to write (default .lab/kubeconfig)
  --timing MODE         realistic (VMs Running after ~20 s) or fast (default realistic)
  --config FILE         cluster settings (YAML): versions, feature gates, nodes
  --state-dir DIR       where the CA and admin token are kept (default .lab/emulator)`;

function fail(message: string): never {
  console.error(`emulator: ${message}\n\n${usage}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "8443" },
        kubeconfig: { type: "string", default: ".lab/kubeconfig" },
        timing: { type: "string", default: "realistic" },
        config: { type: "string" },
        "state-dir": { type: "string", default: ".lab/emulator" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    console.log(usage);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--port must be 0..65535, got "${values.port}"`);
  if (values.timing !== "realistic" && values.timing !== "fast") {
    fail(`--timing must be realistic or fast, got "${values.timing}"`);
  }
  let cluster;
  try {
    cluster = values.config ? loadClusterConfig(values.config) : undefined;
  } catch (error) {
    fail((error as Error).message);
  }

  const emulator = await createEmulator({
    host: values.host,
    port,
    kubeconfigPath: values.kubeconfig,
    stateDir: values["state-dir"],
    timing: values.timing,
    ...(cluster ? { cluster } : {}),
  });
  console.log(`KubeVirt API emulator listening on ${emulator.url}`);
  console.log(`kubeconfig: ${emulator.kubeconfigPath}`);
  console.log(`try: kubectl --kubeconfig ${emulator.kubeconfigPath} get vm -A`);

  const shutdown = (): void => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

main().catch((error: unknown) => {
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error("emulator: the port is already in use; pick another with --port (0 for any free one)");
  } else {
    console.error(`emulator: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
