// A session's life through the BFF on a real kube-apiserver, with the emulator beside it as KubeVirt
// and the node (emulator/beside-apiserver.ts): the BFF as deploy/base's service account, KubeVirt's
// work done through the real server's API, and what an operator sees there with kubectl.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { startBesideApiServer, type BesideApiServer } from "../../emulator/beside-apiserver.ts";
import { kubectlFor, type Kubectl } from "../../real-cluster/testing/kubectl.ts";
import { startRealCluster, type RealCluster } from "../../real-cluster/testing/real-cluster.ts";
import { launchRunning, startTestBffOnCluster, type TestBffOnCluster } from "../testing/test-bff.ts";
import { aLab } from "./testing/fixtures.ts";

const namespace = "lab-sessions";
const lab = aLab();

let cluster: RealCluster;
let kubevirt: BesideApiServer;
let bff: TestBffOnCluster;
let kubectl: Kubectl;
let stateDir: string;

beforeAll(async () => {
  cluster = await startRealCluster();
  kubectl = await kubectlFor(cluster.admin);
  stateDir = await mkdtemp(path.join(tmpdir(), "lab-beside-"));
  kubevirt = await startBesideApiServer({
    kubeConfig: cluster.admin,
    kubeconfigPath: kubectl.kubeconfigPath,
    stateDir,
    timing: "fast",
    guests: "sandbox",
  });
  bff = await startTestBffOnCluster(cluster.bff, { labs: [lab] });
}, 900_000);

afterAll(async () => {
  await bff?.close();
  await kubevirt?.close();
  await cluster?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe("a session on a real API server, KubeVirt emulated beside it", () => {
  let sessionId = "";

  it("launches: the VM the BFF created runs, with its VMI and launcher pod where kubectl shows them", async () => {
    const alice = await bff.signIn("alice");
    sessionId = await launchRunning(alice, lab.id);
    const vmi = JSON.parse(await kubectl("get", "vmi", "-n", namespace, sessionId, "-o", "json")) as {
      metadata: { uid: string };
      status: { phase: string; nodeName: string };
    };
    expect(vmi.status).toMatchObject({ phase: "Running", nodeName: "node01" });
    const selector = `vm.kubevirt.io/name=${sessionId}`;
    const pod = JSON.parse(await kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json")) as {
      items: { metadata: { labels: Record<string, string>; ownerReferences: { uid: string }[] } }[];
    };
    // The server gave the VMI its own uid: the pod names that one, not the emulator's.
    expect(pod.items[0]?.metadata.labels["kubevirt.io/created-by"]).toBe(vmi.metadata.uid);
    expect(pod.items[0]?.metadata.ownerReferences[0]?.uid).toBe(vmi.metadata.uid);
    // The real server's own table for pods, as an operator reads it: every container ready, the
    // container disks' init containers done (kubectl would print Init:1/3 otherwise).
    const table = await kubectl("get", "pods", "-n", namespace, "-l", selector);
    expect(table).toMatch(/virt-launcher-\S+\s+3\/3\s+Running/);
  });

  it("ends: the VM, its VMI, its launcher pod and its user-data Secret are gone from the server", async () => {
    const alice = await bff.signIn("alice");
    expect((await alice.delete(`/api/sessions/${sessionId}`)).status).toBe(202);
    await eventually(
      () => kubectl("get", "vm,vmi,pods,secrets", "-n", namespace, "-o", "name"),
      (names) => !names.includes(sessionId),
      { what: "the session's objects gone from the API server", timeoutMs: 30_000 },
    );
    expect((await alice.get(`/api/sessions/${sessionId}`)).status).toBe(404);
  });
});
