// `npm run doctor`: checks the cluster the console uses, with the console's own credentials, and
// says what is wrong and how to fix it. Exit code 1 when any check fails, 0 otherwise (warnings
// included), 2 when it cannot run at all. The instructor page runs the same checks inside the BFF.
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { detectInCluster } from "../config.ts";
import { consoleKubeconfigPathFor } from "../embedded-emulator.ts";
import { loadKubeConfig, type ConfiguredCluster } from "../kube/client.ts";
import { createClusterFacts } from "../kube/cluster-facts.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { runDoctor } from "../doctor/doctor.ts";
import { formatReport } from "../doctor/format-report.ts";

const usage = `Usage: npm run doctor -- [options]
  --json              print the report as JSON
  --kubeconfig PATH   the cluster and credentials to check (default: LAB_KUBECONFIG, KUBECONFIG,
                      the pod's service account, or the embedded emulator of a running npm start)
  --namespace NAME    the VM namespace (default: LAB_NAMESPACE, else lab-sessions)
  --lease-namespace NAME
                      where the replicas keep their leases (default: LAB_LEASE_NAMESPACE,
                      POD_NAMESPACE, else lab-console; not checked when LAB_COORDINATION=off)`;

function stop(message: string): never {
  console.error(`doctor: ${message}`);
  process.exit(2);
}

function chooseCluster(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): { cluster: ConfiguredCluster; shown: string } {
  const file = flag ?? env.LAB_KUBECONFIG ?? env.KUBECONFIG;
  if (file) {
    if (flag === undefined && env.LAB_KUBECONFIG === undefined && file.includes(path.delimiter)) {
      stop("KUBECONFIG lists several files; pass the console's one with --kubeconfig or LAB_KUBECONFIG");
    }
    return { cluster: { kind: "kubeconfig", path: path.resolve(file) }, shown: file };
  }
  if (detectInCluster(env)) return { cluster: { kind: "in-cluster" }, shown: "this pod's service account" };
  const embedded = consoleKubeconfigPathFor(path.resolve(env.DATA_DIR ?? ".lab", "kubeconfig"));
  if (existsSync(embedded)) {
    return {
      cluster: { kind: "kubeconfig", path: embedded },
      shown: `the embedded emulator of npm start (${path.relative(process.cwd(), embedded)})`,
    };
  }
  stop(
    `no cluster to check: pass --kubeconfig, set LAB_KUBECONFIG, or start the console (npm start) first.\n\n${usage}`,
  );
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        json: { type: "boolean", default: false },
        kubeconfig: { type: "string" },
        namespace: { type: "string" },
        "lease-namespace": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    stop(`${(error as Error).message}\n\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    return;
  }
  const vmNamespace = values.namespace ?? process.env.LAB_NAMESPACE ?? "lab-sessions";
  const { env } = process;
  const leaseNamespace =
    env.LAB_COORDINATION === "off"
      ? undefined
      : (values["lease-namespace"] ?? env.LAB_LEASE_NAMESPACE ?? env.POD_NAMESPACE ?? "lab-console");
  const { cluster, shown } = chooseCluster(values.kubeconfig, process.env);
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(cluster);
  } catch (error) {
    stop((error as Error).message);
  }
  const report = await runDoctor(createClusterFacts(kubeConfig, new KubeRequestCounter()), {
    vmNamespace,
    leaseNamespace,
  });
  const server = kubeConfig.getCurrentCluster()?.server ?? "";
  console.log(
    values.json
      ? JSON.stringify(report, null, 2)
      : formatReport(report, `${server} as ${shown}, VMs in ${vmNamespace}`),
  );
  process.exitCode = report.status === "fail" ? 1 : 0;
}

main().catch((error: unknown) => stop(error instanceof Error ? error.message : String(error)));
