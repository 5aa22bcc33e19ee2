// A session's life through the BFF on a real kube-apiserver, with the emulator beside it as KubeVirt
// and the node (emulator/beside-apiserver.ts): the BFF as deploy/base's service account, its console
// and the agent's port-forward through kube-apiserver's aggregation layer to the emulator's virt-api,
// KubeVirt's work done through the real server's API, and what an operator sees there with kubectl.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BootLog } from "../../common/api.ts";
import { SelfCheck } from "../../common/grading-api.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startBesideApiServer, type BesideApiServer } from "../../emulator/beside-apiserver.ts";
import { kubectlFor, type Kubectl } from "../../real-cluster/testing/kubectl.ts";
import { startRealCluster, type RealCluster } from "../../real-cluster/testing/real-cluster.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { launchWarm, scheduleReadyClass } from "../classes/testing/warm-class.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import {
  launchRunning,
  startTestBffOnCluster,
  type TestBffOnCluster,
  type TestBrowser,
} from "../testing/test-bff.ts";

const namespace = "lab-sessions";
const lab = aGradingLab([
  aCheck({ id: "hello-file", title: "Create ~/hello.txt", selfCheck: true, run: "test -f ~/hello.txt" }),
]);

let cluster: RealCluster;
let kubevirt: BesideApiServer;
let bff: TestBffOnCluster;
let kubectl: Kubectl;
let stateDir: string;
let alice: TestBrowser;
let sessionId = "";

// A class starts five minutes from now on the BFF's clock, which runs ahead: its warm VM is booted
// before the class, for the warm claim's tests.
const classStart = Date.parse("2030-03-02T09:00:00.000Z");
const offsetMs = classStart - 5 * 60_000 - Date.now();

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
  bff = await startTestBffOnCluster(cluster.bff, {
    labs: [lab],
    gradingLimits: { selfCheckIntervalMs: 1 },
    warmPool: { intervalMs: 1000 },
    now: () => new Date(Date.now() + offsetMs),
  });
  alice = await bff.signIn("alice");
}, 900_000);

afterAll(async () => {
  await bff?.close();
  await kubevirt?.close();
  await cluster?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

interface Vmi {
  metadata: { uid: string };
  status: { phase: string; nodeName: string };
}

async function serverVmi(name = sessionId): Promise<Vmi> {
  return JSON.parse(await kubectl("get", "vmi", "-n", namespace, name, "-o", "json")) as Vmi;
}

/** Waits for a VMI other than `before` to run, as the server has it. */
async function untilNewVmiRuns(name: string, before: Vmi): Promise<void> {
  await eventually(
    () => serverVmi(name).catch(() => undefined),
    (vmi) => vmi !== undefined && vmi.metadata.uid !== before.metadata.uid && vmi.status?.phase === "Running",
    { what: "a new VMI running", timeoutMs: 30_000 },
  );
}

/** The student's self-check once the agent answers it. */
async function gradableSelfCheck(student: TestBrowser, id: string): Promise<SelfCheck["result"]> {
  return eventually(
    async () => {
      const answer = await student.post(`/api/sessions/${id}/checks`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return SelfCheck.parse(answer.body).result;
    },
    (result) => result.gradable,
    { what: "a gradable self-check", timeoutMs: 30_000 },
  );
}

describe("the cluster an operator sees with kubectl", () => {
  it("is a real v1.34 server on etcd, with KubeVirt's kinds and its subresources' APIService Available", async () => {
    expect(await kubectl("version")).toMatch(/Server Version: v1\.34\.\d+/);
    expect(await kubectl("get", "--raw", "/readyz?verbose")).toContain("[+]etcd ok");
    expect(await kubectl("get", "apiservices", "v1.subresources.kubevirt.io")).toMatch(
      /kubevirt\/virt-api\s+True/,
    );
    expect(await kubectl("api-resources", "--api-group=kubevirt.io")).toMatch(/^virtualmachines\s+vm,vms\s/m);
    expect(await kubectl("get", "nodes")).toMatch(/^node01\s+Ready/m);
  });
});

describe("a session on a real API server, KubeVirt emulated beside it", () => {
  it("launches: the VM the BFF created runs, with its VMI and launcher pod where kubectl shows them", async () => {
    sessionId = await launchRunning(alice, lab.id);
    const vmi = await serverVmi();
    expect(vmi.status).toMatchObject({ phase: "Running", nodeName: "node01" });
    const selector = `vm.kubevirt.io/name=${sessionId}`;
    const pods = JSON.parse(await kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json")) as {
      items: { metadata: { labels: Record<string, string>; ownerReferences: { uid: string }[] } }[];
    };
    // The server gave the VMI its own uid: the pod names that one, not the emulator's.
    expect(pods.items[0]?.metadata.labels["kubevirt.io/created-by"]).toBe(vmi.metadata.uid);
    expect(pods.items[0]?.metadata.ownerReferences[0]?.uid).toBe(vmi.metadata.uid);
    // The real server's own table for pods, as an operator reads it: every container ready, the
    // container disks' init containers done (kubectl would print Init:1/3 otherwise).
    const table = await kubectl("get", "pods", "-n", namespace, "-l", selector);
    expect(table).toMatch(/virt-launcher-\S+\s+3\/3\s+Running/);
  });

  it("shows the session to the TAs of its section, read back from the VM's labels on the server", async () => {
    const listed = async (ta: string) =>
      ((await (await bff.signIn(ta)).get("/api/sessions")).body.items as { id: string }[]).map(
        (each) => each.id,
      );
    expect(await listed("tara")).toContain(sessionId);
    expect(await listed("tom")).not.toContain(sessionId);
  });

  it("serves the serial console through kube-apiserver's aggregation layer", async () => {
    const serial = await ConsoleTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    try {
      await serial.untilLive();
      expect(await serial.run("echo through-the-aggregator")).toBe("through-the-aggregator");
      expect(await serial.run("touch ~/hello.txt && echo made")).toBe("made");
    } finally {
      serial.close();
    }
  });

  it("reads the boot log, which kube-apiserver gets from the node's kubelet", async () => {
    // A node's log lags the serial line by a few milliseconds (virt-tail, the container runtime).
    const log = await eventually(
      async () => {
        const answer = await alice.get(`/api/sessions/${sessionId}/boot-log`);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        return BootLog.parse(answer.body);
      },
      (read) => read.lines.join("\n").includes("through-the-aggregator"),
      { what: "the console's last command in the boot log" },
    );
    expect(log.logging).toBe("on");
    const pod = await kubectl(
      "get",
      "pods",
      "-n",
      namespace,
      "-l",
      `vm.kubevirt.io/name=${sessionId}`,
      "-o",
      "name",
    );
    expect(await kubectl("logs", "-n", namespace, pod.trim(), "-c", "guest-console-log")).toContain(
      "through-the-aggregator",
    );
  });

  it("grades through the agent, reached over the port-forward subresource", async () => {
    const result = await gradableSelfCheck(alice, sessionId);
    expect(result.checks).toEqual([expect.objectContaining({ checkId: "hello-file", passed: true })]);
  });

  it("restarts: the server gets a new VMI, with a new uid, and it runs", async () => {
    const before = await serverVmi();
    const restarted = await alice.post(`/api/sessions/${sessionId}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(202);
    await untilNewVmiRuns(sessionId, before);
  });

  it("ends: the VM, its VMI, its launcher pod and its user-data Secret are gone from the server", async () => {
    expect((await alice.delete(`/api/sessions/${sessionId}`)).status).toBe(202);
    await eventually(
      () => kubectl("get", "vm,vmi,pods,secrets", "-n", namespace, "-o", "name"),
      (names) => !names.includes(sessionId),
      { what: "the session's objects gone from the API server", timeoutMs: 30_000 },
    );
    expect((await alice.get(`/api/sessions/${sessionId}`)).status).toBe(404);
  });
});

describe("a warm VM on a real API server", () => {
  let bob: TestBrowser;
  let warmId = "";

  it("is booted for a class, and claimed by a student's launch: the JSON patch's tests pass on the server", async () => {
    const ivan = await bff.signIn("ivan");
    await scheduleReadyClass(ivan, {
      labId: lab.id,
      startsAt: new Date(classStart),
      endsAt: new Date(classStart + 2 * 3_600_000),
      expected: 1,
    });
    bob = await bff.signIn("bob");
    warmId = await launchWarm(bob, lab.id);
    const vm = JSON.parse(await kubectl("get", "vm", "-n", namespace, warmId, "-o", "json")) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    expect(vm.metadata.annotations["labconsole.dev/owner"]).toBe("bob");
    expect(Object.keys(vm.metadata.labels).filter((label) => label.includes("warm"))).toEqual([]);
  });

  it("grades with the session's key, before and after a restart from a fresh disk", async () => {
    expect(await gradableSelfCheck(bob, warmId)).toMatchObject({ score: 0, maxScore: 1 });
    const before = await serverVmi(warmId);
    expect((await bob.post(`/api/sessions/${warmId}/restart`)).status).toBe(202);
    await untilNewVmiRuns(warmId, before);
    expect(await gradableSelfCheck(bob, warmId)).toMatchObject({ gradable: true, maxScore: 1 });
  });
});
