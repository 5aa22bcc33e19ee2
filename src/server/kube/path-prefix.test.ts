// The BFF's cluster calls through a kubeconfig whose server URL has a path, as Rancher's cluster proxy
// (https://rancher.example/k8s/clusters/c-1) or an API gateway hands out. The emulator answers only
// below that prefix, so any call that builds its URL from the server's origin alone gets a 404: the
// restart PUT, the doctor's /metrics read, the watches, the console and the port-forward must all keep
// it. As the deployed service account, under deploy/base's RBAC, over real sockets.
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { echoServerCommand } from "../../emulator/guests/testing/echo-server.ts";
import { vmManifest } from "../../emulator/testing/manifests.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { runDoctor } from "../doctor/doctor.ts";
import { labelKeys, managedByValue, sessionsSelector } from "../sessions/labels.ts";
import { createClusterClient, type ClusterClient, type WatchEvent } from "./client.ts";
import { createClusterFacts } from "./cluster-facts.ts";
import { KubeRequestCounter } from "./request-counter.ts";
import type { VirtualMachine, VirtualMachineInstance } from "./types.ts";

const prefix = "/k8s/clusters/c-1";
const vmName = "through-the-proxy";
// An echo server inside the guest, for the port-forward.
const userData = `#cloud-config
runcmd:
  - ${JSON.stringify(echoServerCommand(8080))}
`;

let cluster: TestEmulator;
let client: ClusterClient;
const watchStop = new AbortController();
const watched: WatchEvent<VirtualMachine>[] = [];
let watchError: unknown;

beforeAll(async () => {
  cluster = await startTestEmulator({
    pathPrefix: prefix,
    deployRbac: true,
    guests: "sandbox",
    // Both gates on, stated rather than left to the emulator's defaults: the doctor can tell only
    // from the API server's /metrics (its version alone says the gate is off on 1.34).
    cluster: { kubernetes: { featureGates: { ImageVolume: true } }, kubevirt: { disabledFeatureGates: [] } },
  });
  client = createClusterClient(cluster.bffKubeConfig(), {
    namespace: "lab-sessions",
    labelSelector: sessionsSelector,
    counter: new KubeRequestCounter(),
  });
});

afterAll(async () => {
  watchStop.abort();
  await cluster?.close();
});

async function runningVmi(): Promise<VirtualMachineInstance> {
  return eventually(
    async () => {
      const { items } = await client.virtualMachineInstances.list();
      const vmi = items.find((item) => item.metadata.name === vmName);
      return vmi?.status?.phase === "Running" ? vmi : undefined;
    },
    { what: `${vmName} running`, timeoutMs: 15_000 },
  );
}

/** Collects what a websocket or a port-forwarded connection receives, as latin1 text. */
function received(source: { on(event: "data" | "message", listener: (data: Buffer) => void): unknown }) {
  let text = "";
  return {
    get text() {
      return text;
    },
    listen(event: "data" | "message") {
      source.on(event, (data: Buffer) => (text += data.toString("latin1")));
      return this;
    },
  };
}

describe("a kubeconfig whose server URL has a path (Rancher, API gateways)", () => {
  it("keeps the path in the URL", () => {
    expect(new URL(cluster.bffKubeConfig().getCurrentCluster()?.server ?? "").pathname).toBe(prefix);
  });

  it("lists and watches session VMs through it", async () => {
    const { resourceVersion } = await client.virtualMachines.list();
    await client.virtualMachines.watch(
      resourceVersion,
      (event) => watched.push(event),
      (error) => (watchError = error),
      watchStop.signal,
    );
    const labels = { [labelKeys.managedBy]: managedByValue, [labelKeys.session]: vmName };
    await client.createVirtualMachine(
      vmManifest(vmName, { labels, templateLabels: labels, userData }) as unknown as VirtualMachine,
    );
    await eventually(
      () =>
        watched.some((event) => event.type === "ADDED" && event.object.metadata.name === vmName)
          ? true
          : undefined,
      { what: "the VM's ADDED event" },
    );
    expect(watchError).toBeUndefined();
  });

  it("opens the serial console through it", async () => {
    await runningVmi();
    const socket: WebSocket = await client.openConsole(vmName, AbortSignal.timeout(10_000));
    try {
      const output = received(socket).listen("message");
      socket.send(Buffer.from("echo through-$((40 + 2))\r"), { binary: true });
      await eventually(() => (output.text.includes("through-42") ? true : undefined), {
        what: "the console's answer",
      });
    } finally {
      socket.terminate();
    }
  });

  it("port-forwards to a port inside the VM through it", async () => {
    await runningVmi();
    // The echo server starts in the background at boot: retry until it listens.
    const connection: Duplex = await eventually(
      () => client.portForward(vmName, 8080, AbortSignal.timeout(5_000)),
      { what: "the echo server", timeoutMs: 10_000 },
    );
    try {
      const echo = received(connection).listen("data");
      connection.write("ping through the proxy");
      await eventually(() => (echo.text === "ping through the proxy" ? true : undefined), {
        what: "the echo",
      });
    } finally {
      connection.destroy();
    }
  });

  it("restarts the VM through it (KubeVirt's restart subresource)", async () => {
    const before = await runningVmi();
    await client.restartVirtualMachine(vmName);
    await eventually(
      async () => {
        const { items } = await client.virtualMachineInstances.list();
        const vmi = items.find((item) => item.metadata.name === vmName);
        return vmi && vmi.metadata.uid !== before.metadata.uid ? true : undefined;
      },
      { what: "a new VMI", timeoutMs: 15_000 },
    );
  });

  it("reads the API server's /metrics through it, so the doctor judges the gate from the metric", async () => {
    const facts = createClusterFacts(cluster.bffKubeConfig(), new KubeRequestCounter());
    expect(await facts.apiServerMetrics()).toContain('kubernetes_feature_enabled{name="ImageVolume",');
    const report = await runDoctor(facts, { vmNamespace: "lab-sessions", leaseNamespace: "lab-console" });
    const imageVolume = report.checks.find((check) => check.id === "image-volume");
    // Read from the metric (ok); guessed from the version, 1.34's gate would be off (a warning).
    expect(imageVolume?.status).toBe("ok");
    expect(imageVolume?.details.join("\n")).toContain('kubernetes_feature_enabled{name="ImageVolume"} 1');
    expect(report.checks.find((check) => check.id === "cluster")?.status).toBe("ok");
  });
});
