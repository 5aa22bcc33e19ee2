// `npm run emulator`: runs the emulator in the foreground until Ctrl+C (or, with --exit-with-stdin,
// until its stdin closes: a parent that spawned it with a pipe takes it down even when SIGKILLed).
import { parseArgs } from "node:util";
import { loadClusterConfig } from "./cluster/cluster-config.ts";
import { KubeConfig } from "@kubernetes/client-node";
import { startBesideApiServer } from "./beside-apiserver.ts";
import { createEmulator, type EmulatorOptions } from "./emulator.ts";
import { guestHostProblem } from "./guests/sandbox/guest.ts";
import {
  cgroupRefusal,
  cgroupWarning,
  describeCgroupSetup,
  guestCgroupSetup,
} from "./guests/cgroups/cgroup-setup.ts";
import { UNLIMITED_GUESTS_ENV } from "./guests/cgroups/guest-limits.ts";
import { sandboxAvailable } from "./guests/isolation/sandbox-support.ts";
import { normalizePathPrefix } from "./http/path-prefix.ts";
import { parseServiceAccountKubeconfig } from "./apiserver/service-accounts.ts";

const usage = `Usage: npm run emulator -- [options]
  --host HOST           address to listen on (default 127.0.0.1)
  --port PORT           port, 0 for any free one (default 8443)
  --kubeconfig PATH     kubeconfig to write (default .lab/kubeconfig)
  --timing MODE         realistic (VMs Running after ~20 s) or fast (default realistic)
  --config FILE         cluster settings (YAML): versions, feature gates, nodes
  --state-dir DIR       where the CA, tokens and guests are kept (default .lab/emulator)
  --guests MODE         sandbox (a bash in each Running VMI), qemu (a Debian guest under
                        QEMU, built from packages on first use) or none (default sandbox)
  --rbac PATH           enforce RBAC from these YAML files or folders (repeatable)
  --service-account-kubeconfig NAMESPACE/NAME=PATH
                        write a kubeconfig for that service account (repeatable)
  --faults              serve the fault API under /emulator/faults/ (admin token only)
  --path-prefix PATH    serve only below PATH, as behind Rancher's /k8s/clusters/ID proxy;
                        the kubeconfigs' server URL carries it (default none)
  --exit-with-stdin     shut down when stdin closes
  --apiserver KUBECONFIG
                        do not be the API server: act as KubeVirt and the node beside the
                        real one this kubeconfig reaches (npm run cluster:real starts one);
                        --port is then where it serves subresources.kubevirt.io (default any)

Environment:
  ${UNLIMITED_GUESTS_ENV}=1
                        start guests even where they cannot get cgroup limits (processes,
                        memory, CPU): only for guests you trust`;

function fail(message: string): never {
  console.error(`emulator: ${message}\n\n${usage}`);
  process.exit(2);
}

// What only the emulator's own API server has: beside a real one, that server's kubeconfigs, RBAC and
// paths apply.
const ownApiServerOnly = [
  "kubeconfig",
  "rbac",
  "service-account-kubeconfig",
  "faults",
  "path-prefix",
] as const;

function readOptions(): { options: EmulatorOptions; exitWithStdin: boolean; apiserver?: string } | undefined {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string" },
        kubeconfig: { type: "string" },
        timing: { type: "string", default: "realistic" },
        config: { type: "string" },
        "state-dir": { type: "string", default: ".lab/emulator" },
        guests: { type: "string", default: "sandbox" },
        rbac: { type: "string", multiple: true },
        "service-account-kubeconfig": { type: "string", multiple: true },
        faults: { type: "boolean", default: false },
        "path-prefix": { type: "string" },
        "exit-with-stdin": { type: "boolean", default: false },
        apiserver: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    console.log(usage);
    return undefined;
  }
  if (values.apiserver !== undefined) {
    const given = ownApiServerOnly.filter((name) => values[name] !== undefined && values[name] !== false);
    if (given.length > 0) fail(`--${given.join(", --")} cannot go with --apiserver: that server has its own`);
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    fail(`--port must be 0..65535, got "${values.port}"`);
  if (values.timing !== "realistic" && values.timing !== "fast") {
    fail(`--timing must be realistic or fast, got "${values.timing}"`);
  }
  if (values.guests !== "sandbox" && values.guests !== "qemu" && values.guests !== "none") {
    fail(`--guests must be sandbox, qemu or none, got "${values.guests}"`);
  }
  const unlimited = process.env[UNLIMITED_GUESTS_ENV] ?? "";
  if (!["", "0", "1"].includes(unlimited)) fail(`${UNLIMITED_GUESTS_ENV} must be 1 or 0, got "${unlimited}"`);
  let cluster;
  let serviceAccountKubeconfigs;
  let pathPrefix;
  try {
    pathPrefix = normalizePathPrefix(values["path-prefix"]);
    cluster = values.config ? loadClusterConfig(values.config) : undefined;
    serviceAccountKubeconfigs = (values["service-account-kubeconfig"] ?? []).map(
      parseServiceAccountKubeconfig,
    );
  } catch (error) {
    fail((error as Error).message);
  }
  return {
    options: {
      host: values.host,
      port,
      kubeconfigPath: values.kubeconfig,
      stateDir: values["state-dir"],
      timing: values.timing,
      guests: values.guests,
      faults: values.faults,
      unlimitedGuests: unlimited === "1",
      serviceAccountKubeconfigs,
      ...(values.rbac ? { rbacFiles: values.rbac } : {}),
      ...(pathPrefix ? { pathPrefix } : {}),
      ...(cluster ? { cluster } : {}),
    },
    exitWithStdin: values["exit-with-stdin"],
    ...(values.apiserver === undefined ? {} : { apiserver: values.apiserver }),
  };
}

async function main(): Promise<void> {
  const read = readOptions();
  if (!read) return;
  const { options, exitWithStdin, apiserver } = read;
  const hostChecks = options.guests === "sandbox" ? checkGuestHost(options.unlimitedGuests) : undefined;
  if (apiserver !== undefined) return runBeside(apiserver, options, exitWithStdin, hostChecks);
  // The host checks only warn: the API listens meanwhile, and the warnings come first all the same.
  const [emulator] = await Promise.all([createEmulator(options), hostChecks]);
  console.log(`KubeVirt API emulator listening on ${emulator.url}`);
  console.log(`kubeconfig: ${emulator.kubeconfigPath}`);
  for (const account of options.serviceAccountKubeconfigs ?? []) {
    console.log(`kubeconfig of service account ${account.namespace}/${account.name}: ${account.path}`);
  }
  if (options.rbacFiles) console.log(`RBAC enforced from: ${options.rbacFiles.join(", ")}`);
  if (options.pathPrefix) console.log(`served only below ${options.pathPrefix} (other paths: 404)`);
  if (options.faults) console.log(`fault API: POST ${emulator.url}/emulator/faults/...`);
  console.log(`try: kubectl --kubeconfig ${emulator.kubeconfigPath} get vm -A`);

  stopOnSignals(() => emulator.close(), exitWithStdin);
}

async function runBeside(
  kubeconfigPath: string,
  options: EmulatorOptions,
  exitWithStdin: boolean,
  hostChecks: Promise<void> | undefined,
): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const [beside] = await Promise.all([
    startBesideApiServer({
      kubeConfig,
      kubeconfigPath,
      ...(options.stateDir ? { stateDir: options.stateDir } : {}),
      ...(options.timing ? { timing: options.timing } : {}),
      ...(options.cluster ? { cluster: options.cluster } : {}),
      guests: options.guests ?? "sandbox",
      unlimitedGuests: options.unlimitedGuests === true,
      ...(options.host ? { host: options.host } : {}),
      ...(options.port === undefined ? {} : { port: options.port }),
    }),
    hostChecks,
  ]);
  const { host, port } = beside.subresources;
  console.log(`KubeVirt emulated beside the API server at ${kubeConfig.getCurrentCluster()?.server}`);
  console.log(`subresources.kubevirt.io served to it from https://${host}:${port} (APIService Available)`);
  console.log(`try: kubectl --kubeconfig ${kubeconfigPath} get nodes,vm -A`);
  stopOnSignals(() => beside.close(), exitWithStdin);
}

function stopOnSignals(close: () => Promise<void>, exitWithStdin: boolean): void {
  let shuttingDown = false;
  const shutdown = (): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    void close().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  if (exitWithStdin) {
    process.stdin.on("end", shutdown);
    process.stdin.on("close", shutdown);
    process.stdin.on("error", shutdown);
    process.stdin.resume();
  }
}

/** Why guests would not start or would lack limits on this host, as warnings; nothing stops. */
async function checkGuestHost(unlimitedGuests: boolean | undefined): Promise<void> {
  const sandbox = await sandboxAvailable();
  const problem = sandbox.ok ? guestHostProblem() : sandbox.message;
  if (problem) console.warn(`emulator: warning: VMIs will fail to start: ${problem}`);
  const cgroups = await guestCgroupSetup();
  const withoutCpu = cgroupWarning(cgroups);
  if (withoutCpu) console.warn(`emulator: warning: ${withoutCpu}`);
  if (cgroups.problems.length === 0) {
    console.log(`guest limits: ${describeCgroupSetup(cgroups)}`);
  } else if (unlimitedGuests) {
    console.warn(
      `emulator: WARNING: ${UNLIMITED_GUESTS_ENV}=1: guests start without some of their limits (cgroups: ${describeCgroupSetup(cgroups)}):\n${cgroups.problems.map((p) => `- ${p}`).join("\n")}`,
    );
  } else {
    console.warn(`emulator: warning: VMIs will fail to start: ${cgroupRefusal(cgroups)}`);
  }
}

main().catch((error: unknown) => {
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error("emulator: the port is already in use; pick another with --port (0 for any free one)");
  } else {
    console.error(`emulator: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
