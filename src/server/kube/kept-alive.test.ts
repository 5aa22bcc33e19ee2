// The BFF's requests to the API server keep their connections: the emulator's server counts the TCP
// connections it was opened, over real TLS, while the clients start.ts builds make the requests
// the BFF's timers make (lease renewals every 2 s, lists, the server's version).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../common/testing/patience.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createClusterClient, loadKubeConfig } from "./client.ts";
import { createClusterFacts } from "./cluster-facts.ts";
import { ClusterUnavailableError, KubeStatusError } from "./errors.ts";
import { KeptAliveKubeConfig } from "./kept-alive.ts";
import { createLeaseClient } from "./leases.ts";
import { KubeRequestCounter } from "./request-counter.ts";

let cluster: TestEmulator;
const kubeConfigs: KeptAliveKubeConfig[] = [];

beforeAll(async () => {
  cluster = await startTestEmulator();
});

afterAll(async () => {
  for (const kubeConfig of kubeConfigs) kubeConfig.close();
  await cluster?.close();
});

/** The BFF's clients, built as start.ts builds them. */
function bffClients(source = loadKubeConfig({ kind: "kubeconfig", path: cluster.emulator.kubeconfigPath })) {
  const kubeConfig = KeptAliveKubeConfig.from(source);
  kubeConfigs.push(kubeConfig);
  const counter = new KubeRequestCounter();
  return {
    kubeConfig,
    client: createClusterClient(kubeConfig, {
      namespace: "lab-sessions",
      labelSelector: "app.kubernetes.io/managed-by=lab-console",
      counter,
    }),
    leases: createLeaseClient(kubeConfig, { namespace: "lab-console", counter }),
    facts: createClusterFacts(kubeConfig, counter),
  };
}

const opened = () => cluster.emulator.connectionStats().opened;

function leaseNamed(name: string) {
  const now = new Date();
  return {
    name,
    holderIdentity: "replica-a",
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 0,
  };
}

describe("the BFF's requests to the API server", () => {
  it("share one connection when a timer makes them, one after another", async () => {
    const { client, leases } = bffClients();
    const lease = leaseNamed("renewed");
    await leases.create(lease);
    const before = opened();
    for (let round = 0; round < 5; round += 1) {
      // A lease renewal as leader-elector.ts makes it, a list of the VMIs and the server's version.
      const read = await leases.get(lease.name);
      await leases.replace({ ...lease, renewTime: new Date() }, read?.resourceVersion ?? "");
      await client.virtualMachineInstances.list();
      await client.serverVersion();
      await sleep(20);
    }
    expect(opened() - before).toBeLessThanOrEqual(2);
  });

  it("share it with the requests of their own (a subresource, /metrics) and with a watch beside them", async () => {
    const { client, facts } = bffClients();
    const before = opened();
    const watching = new AbortController();
    const { resourceVersion } = await client.virtualMachines.list();
    await client.virtualMachines.watch(
      resourceVersion,
      () => {},
      () => {},
      watching.signal,
    );
    for (let round = 0; round < 5; round += 1) {
      await expect(client.setVmiPaused("no-such-vm", true)).rejects.toBeInstanceOf(KubeStatusError);
      await facts.apiServerMetrics();
      await client.virtualMachines.list();
    }
    const openedMeanwhile = opened() - before;
    watching.abort();
    // The watch holds one while the requests go on over another.
    expect(openedMeanwhile).toBeLessThanOrEqual(2);
  });

  it("are closed when the client is", async () => {
    for (const earlier of kubeConfigs) earlier.close();
    const openNow = () => cluster.emulator.connectionStats().open;
    await waitFor(() => openNow() === 0, "the earlier tests' connections closed");
    const { kubeConfig, client } = bffClients();
    await client.serverVersion();
    await sleep(100);
    expect(openNow(), "kept, not only slow to close").toBe(1);
    kubeConfig.close();
    await waitFor(() => openNow() === 0, "the kept connection closed");
    // Requests after close still work, each on a connection of its own.
    await expect(client.serverVersion()).resolves.toMatch(/^v1\./);
  });

  it("still check the API server's certificate", async () => {
    const untrusting = new KubeConfig();
    const server = cluster.emulator.url;
    untrusting.loadFromOptions({
      clusters: [{ name: "emulator", server, skipTLSVerify: false }],
      users: [{ name: "admin", token: cluster.emulator.adminToken }],
      contexts: [{ name: "emulator", cluster: "emulator", user: "admin" }],
      currentContext: "emulator",
    });
    const { client } = bffClients(untrusting);
    await expect(client.serverVersion()).rejects.toBeInstanceOf(ClusterUnavailableError);
  });

  it("check the certificate against the CA its file holds now, renewed or not", async () => {
    const source = loadKubeConfig({ kind: "kubeconfig", path: cluster.emulator.kubeconfigPath });
    const folder = await mkdtemp(path.join(tmpdir(), "kept-alive-"));
    try {
      const caFile = path.join(folder, "ca.crt");
      const ca = Buffer.from(source.getCurrentCluster()!.caData!, "base64");
      await writeFile(caFile, ca);
      const fromFile = new KubeConfig();
      fromFile.loadFromOptions({
        clusters: [{ name: "emulator", server: cluster.emulator.url, caFile }],
        users: [{ name: "admin", token: cluster.emulator.adminToken }],
        contexts: [{ name: "emulator", cluster: "emulator", user: "admin" }],
        currentContext: "emulator",
      });
      const { client } = bffClients(fromFile);
      const before = opened();
      await client.serverVersion();
      await client.serverVersion();
      expect(opened() - before, "one kept connection").toBe(1);
      // Renewed (here: the same CA written again with a comment): a new connection checks it.
      await writeFile(caFile, Buffer.concat([Buffer.from("# renewed\n"), ca]));
      await client.serverVersion();
      expect(opened() - before).toBe(2);
      // A CA that did not sign the server's certificate fails the next request.
      await writeFile(caFile, untrustedCa);
      await expect(client.serverVersion()).rejects.toBeInstanceOf(ClusterUnavailableError);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

/** A self-signed CA (`openssl req -x509`, P-256) that signed no server here. */
const untrustedCa = `-----BEGIN CERTIFICATE-----
MIIBfjCCASOgAwIBAgIUE6AjRXGbwQ1MnHQwqVrEV3hIaGEwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJdW50cnVzdGVkMB4XDTI2MTIwNzE3MjQxNloXDTM2MTIwNDE3
MjQxNlowFDESMBAGA1UEAwwJdW50cnVzdGVkMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEntWjKZFwJOYqVAh/tc91IY52FXEIucpItXttN2dcftHEimfCOXbyRQxj
Svu9aoZe6wp4JFaRDsQmDr7A35+IrKNTMFEwHQYDVR0OBBYEFLQ83yKaLcjuUstJ
O+m9SrVuNfm4MB8GA1UdIwQYMBaAFLQ83yKaLcjuUstJO+m9SrVuNfm4MA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAMYhOLLSFQrUOcUmtcYz5RSt
cbcyt9RRhk5uyvUUqadzAiEAxuZD9C4KiKSq8GUCM2+eSyljKIIPjNvh3h+J/vES
pg4=
-----END CERTIFICATE-----
`;
