// `npm run cluster:real -- --kubeconfig ADMIN [--bff-kubeconfig BFF] [--guests MODE] [--port 6443]
// [--verbose]`: a real kube-apiserver and etcd (cluster/real-apiserver, Go) for testing against
// instead of the emulator's own API server (docs/real-apiserver.md). Builds the Go program when its
// sources changed, starts it, waits for /readyz, installs KubeVirt's CRDs and, with --bff-kubeconfig,
// deploy/base's namespaces, service account and RBAC with a kubeconfig holding that service account's
// token; then attaches the emulator as KubeVirt and the node (emulator/beside-apiserver.ts). Ctrl-C
// stops it all and removes the server's data. The parts are in src/real-cluster/, which the
// real-cluster tests use too; this is only their command line.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { startBesideApiServer, type BesideApiServer } from "../src/emulator/beside-apiserver.ts";
import type { GuestsChoice } from "../src/emulator/kubevirt-node.ts";
import { bffServiceAccount, writeBffKubeconfig } from "../src/real-cluster/bff-account.ts";
import { assertPortFree, startControlPlane, type ControlPlane } from "../src/real-cluster/control-plane.ts";
import { installKubevirtCrds } from "../src/real-cluster/crds-install.ts";
import { realApiserverBinary } from "../src/real-cluster/go-binary.ts";
import { cacheDir } from "../src/real-cluster/locations.ts";
import { SetupError } from "../src/real-cluster/setup-error.ts";

const startedAt = Date.now();
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Ctrl-C or SIGTERM: the server stops, and whatever fails because of it is no error. */
const stopping = new AbortController();

interface Options {
  kubeconfig: string;
  bffKubeconfig: string | undefined;
  port: number;
  guests: Exclude<GuestsChoice, object>;
  verbose: boolean;
}

const usage =
  "usage: npm run cluster:real -- --kubeconfig ADMIN [--bff-kubeconfig BFF] [--guests sandbox|qemu|none] [--port 6443] [--verbose]";

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "bff-kubeconfig": { type: "string" },
      port: { type: "string", default: "6443" },
      guests: { type: "string", default: "sandbox" },
      verbose: { type: "boolean", default: false },
    },
  });
  const port = Number(values.port);
  const guests = values.guests;
  if (
    values.kubeconfig === undefined ||
    !Number.isInteger(port) ||
    port < 1 ||
    port > 65535 ||
    (guests !== "sandbox" && guests !== "qemu" && guests !== "none")
  ) {
    throw new SetupError(usage);
  }
  return {
    kubeconfig: path.resolve(values.kubeconfig),
    bffKubeconfig:
      values["bff-kubeconfig"] === undefined ? undefined : path.resolve(values["bff-kubeconfig"]),
    port,
    guests,
    verbose: values.verbose,
  };
}

async function main(): Promise<void> {
  const options = parseOptions();
  await assertPortFree(options.port);
  const binary = await realApiserverBinary((line) => console.log(line));

  await mkdir(cacheDir, { recursive: true });
  // One log a port, so two servers side by side do not write into one file.
  const logFile = path.join(cacheDir, `apiserver-${options.port}.log`);
  for (const [signal, why] of [
    ["SIGINT", "interrupted"],
    ["SIGTERM", "terminated"],
  ] as const) {
    process.once(signal, () => {
      console.log(`\nreal-apiserver: ${why}: stopping...`);
      stopping.abort();
    });
  }
  // Ctrl-C stops the emulator first, while the server it writes to is still there, then the server.
  let kubevirt: BesideApiServer | undefined;
  const planeStopping = new AbortController();
  stopping.signal.addEventListener(
    "abort",
    () => void (kubevirt?.close() ?? Promise.resolve()).finally(() => planeStopping.abort()),
    { once: true },
  );
  const launchedAt = Date.now();
  const plane = await startControlPlane({
    binary,
    kubeconfig: options.kubeconfig,
    port: options.port,
    logFile,
    ...(options.verbose ? { echoLog: process.stderr } : {}),
    signal: planeStopping.signal,
  });
  try {
    const crds = await installKubevirtCrds(plane.kubeConfig);
    if (options.bffKubeconfig !== undefined)
      await writeBffKubeconfig(plane.kubeConfig, options.bffKubeconfig);
    kubevirt = await startBesideApiServer({
      kubeConfig: plane.kubeConfig,
      kubeconfigPath: options.kubeconfig,
      // Its own guests' folder beside the server's log; a QEMU guest image is built there once.
      stateDir: path.join(cacheDir, "emulator"),
      guests: options.guests,
    });
    await printReady(plane, kubevirt, options, logFile, { crds, crdsAfterMs: Date.now() - launchedAt });
    const { code, signal } = await plane.exited;
    if (!stopping.signal.aborted) {
      throw new SetupError(
        `real-apiserver stopped on its own (code ${code}, signal ${signal}); see ${logFile}`,
      );
    }
  } finally {
    await kubevirt?.close();
    await plane.stop();
  }
}

async function printReady(
  plane: ControlPlane,
  kubevirt: BesideApiServer,
  options: Options,
  logFile: string,
  { crds, crdsAfterMs }: { crds: string[]; crdsAfterMs: number },
): Promise<void> {
  const rss = plane.residentMiB();
  // Relative where that is shorter to type from here; the given path when it is outside this folder.
  const relative = (file: string) => {
    const shown = path.relative(process.cwd(), file);
    return shown === "" || shown.startsWith("..") ? file : shown;
  };
  console.log(
    [
      "",
      `Ready: kube-apiserver ${plane.version} with etcd at ${plane.server}`,
      `  /readyz after ${seconds(plane.readyAfterMs)}; CRDs installed after ${seconds(crdsAfterMs)} ` +
        `(${seconds(Date.now() - startedAt)} in all)` +
        (rss === undefined ? "" : `; resident memory ${rss} MiB`),
      `  CRDs: ${crds.join(", ")}`,
      `  KubeVirt: the emulator, as virt-controller, virt-handler and the node (guests: ${options.guests}), ` +
        `and as virt-api at https://${kubevirt.subresources.host}:${kubevirt.subresources.port} ` +
        `(v1.subresources.kubevirt.io Available)`,
      `  admin:  kubectl --kubeconfig ${relative(options.kubeconfig)} get vm -A`,
      ...(options.bffKubeconfig === undefined
        ? []
        : [
            `  BFF:    kubeconfig ${relative(options.bffKubeconfig)}, service account ` +
              `${bffServiceAccount.namespace}/${bffServiceAccount.name} with deploy/base's RBAC`,
          ]),
      `  log:    ${relative(logFile)}`,
      "Ctrl-C stops it and removes its data.",
    ].join("\n"),
  );
}

main().then(
  () => {
    console.log("real-apiserver: stopped, its data removed");
    process.exit(0);
  },
  (error: unknown) => {
    if (stopping.signal.aborted) {
      // Stopped while starting or installing: what failed, failed because the server went away.
      console.log("real-apiserver: stopped, its data removed");
      process.exit(0);
    }
    if (error instanceof SetupError) console.error(`cluster:real: ${error.message}`);
    else console.error("cluster:real:", error);
    process.exit(1);
  },
);
