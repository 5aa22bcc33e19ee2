// A lab's declared egress taking effect: the BFF, as deploy/base's service account under deploy/base's
// RBAC, writes one NetworkPolicy per lab that declares egress, selecting that lab's launcher pods, and
// none for a lab without. Through the emulator, which stores policies like an API server.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CoreV1Api, NetworkingV1Api, type V1NetworkPolicy } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployBaseDir, startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";
import { aLab } from "./testing/fixtures.ts";

const mirrorLab = aLab({
  id: "mirrors",
  title: "Mirrors",
  network: {
    egress: [
      { cidr: "203.0.113.0/24", except: ["203.0.113.128/25"], protocol: "TCP", ports: [80, 443] },
      { cidr: "198.51.100.53/32", except: [], protocol: "UDP", ports: [53] },
    ],
  },
});
const plainLab = aLab({ id: "plain", title: "Plain" });
// Declared egress once; its file no longer does, so the policy it left behind must go.
const droppedLab = aLab({ id: "dropped", title: "Dropped" });

const expectedSpec = {
  podSelector: {
    matchLabels: {
      "kubevirt.io": "virt-launcher",
      "app.kubernetes.io/managed-by": "lab-console",
      "labconsole.dev/lab": "mirrors",
    },
  },
  policyTypes: ["Egress"],
  egress: [
    {
      to: [{ ipBlock: { cidr: "203.0.113.0/24", except: ["203.0.113.128/25"] } }],
      ports: [
        { protocol: "TCP", port: 80 },
        { protocol: "TCP", port: 443 },
      ],
    },
    { to: [{ ipBlock: { cidr: "198.51.100.53/32" } }], ports: [{ protocol: "UDP", port: 53 }] },
  ],
};

const consoleLabels = (lab: string) => ({
  "app.kubernetes.io/managed-by": "lab-console",
  "labconsole.dev/lab": lab,
});

function aPolicy(
  name: string,
  labels: Record<string, string>,
  spec: V1NetworkPolicy["spec"],
): V1NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: testNamespace, labels },
    spec,
  };
}

async function policyNames(networking: NetworkingV1Api): Promise<string[]> {
  const list = await networking.listNamespacedNetworkPolicy({ namespace: testNamespace });
  return list.items.map((item) => item.metadata?.name ?? "").sort();
}

describe("a lab's egress as a NetworkPolicy, under deploy/base's RBAC", () => {
  let emulator: TestEmulator;
  let bff: TestBff;
  let networking: NetworkingV1Api;

  beforeAll(async () => {
    emulator = await startTestEmulator({ deployRbac: true });
    networking = emulator.kubeConfig.makeApiClient(NetworkingV1Api);
    // What an administrator applied from deploy/base, what an earlier version of the labs left, and
    // an outdated policy of a lab whose file changed.
    const deployOwn = aPolicy(
      "lab-console-vms-deny-egress",
      { "app.kubernetes.io/part-of": "lab-console" },
      {
        podSelector: {},
        policyTypes: ["Egress"],
        egress: [],
      },
    );
    const stale = aPolicy("lab-egress-dropped", consoleLabels("dropped"), {
      podSelector: { matchLabels: { "labconsole.dev/lab": "dropped" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ protocol: "TCP", port: 443 }] }],
    });
    const outdated = aPolicy("lab-egress-mirrors", consoleLabels("mirrors"), {
      podSelector: { matchLabels: { "labconsole.dev/lab": "mirrors" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ protocol: "TCP", port: 8080 }] }],
    });
    for (const body of [deployOwn, stale, outdated]) {
      await networking.createNamespacedNetworkPolicy({ namespace: testNamespace, body });
    }
    bff = await startTestBff({
      labs: [mirrorLab, plainLab, droppedLab],
      emulator,
      quotas: { perStudent: 3 },
    });
  });

  afterAll(async () => {
    await bff?.close();
    await emulator?.close();
  });

  it("creates none for a lab without egress, and removes what a lab that no longer declares any left", async () => {
    const alice = await bff.signIn("alice");
    const launched = await alice.post("/api/sessions", { labId: "plain" });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    expect((await alice.post("/api/sessions", { labId: "dropped" })).status).toBe(201);
    expect(await policyNames(networking)).toEqual(["lab-console-vms-deny-egress", "lab-egress-mirrors"]);
  });

  it("writes a lab's policy with its ranges and ports when the lab launches, selecting its VM's pod", async () => {
    const bob = await bff.signIn("bob");
    const sessionId = await launchRunning(bob, "mirrors");
    const written = await networking.readNamespacedNetworkPolicy({
      name: "lab-egress-mirrors",
      namespace: testNamespace,
    });
    expect(written.metadata?.labels).toEqual(consoleLabels("mirrors"));
    expect(written.spec).toEqual(expectedSpec);
    // KubeVirt copies the VM template's labels to the launcher pod: the policy selects this one.
    const selector = Object.entries(expectedSpec.podSelector.matchLabels)
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
    const core = emulator.kubeConfig.makeApiClient(CoreV1Api);
    const pods = await eventually(
      () => core.listNamespacedPod({ namespace: testNamespace, labelSelector: selector }),
      (list) => list.items.length === 1,
      { what: "the session's launcher pod" },
    );
    expect(pods.items[0]?.metadata?.labels?.["labconsole.dev/session"]).toBe(sessionId);

    // Another launch of the lab finds the policy in place and asks nothing more than its VM and Secret.
    const version = written.metadata?.resourceVersion;
    const carol = await bff.signIn("carol");
    const before = { create: bff.kubeRequests.total("create"), patch: bff.kubeRequests.total("patch") };
    expect((await carol.post("/api/sessions", { labId: "mirrors" })).status).toBe(201);
    expect(bff.kubeRequests.total("create")).toBe(before.create + 2);
    expect(bff.kubeRequests.total("patch")).toBe(before.patch);
    const after = await networking.readNamespacedNetworkPolicy({
      name: "lab-egress-mirrors",
      namespace: testNamespace,
    });
    expect(after.metadata?.resourceVersion).toBe(version);
  });
});

describe("a cluster whose RBAC predates lab egress (no networkpolicies grant)", () => {
  let emulator: TestEmulator;
  let bff: TestBff;
  let rbacDir: string;

  beforeAll(async () => {
    rbacDir = mkdtempSync(path.join(tmpdir(), "old-rbac-"));
    cpSync(deployBaseDir, rbacDir, { recursive: true });
    const sessions = path.join(rbacDir, "rbac-sessions.yaml");
    const text = readFileSync(sessions, "utf8");
    const start = text.indexOf('  - apiGroups: ["networking.k8s.io"]');
    expect(start).toBeGreaterThan(0);
    const end = text.indexOf("  - apiGroups:", start + 1);
    writeFileSync(sessions, text.slice(0, start) + text.slice(end));
    emulator = await startTestEmulator({ deployRbac: true, rbacFiles: [rbacDir] });
    bff = await startTestBff({ labs: [mirrorLab, plainLab], emulator, quotas: { perStudent: 2 } });
  });

  afterAll(async () => {
    await bff?.close();
    await emulator?.close();
    rmSync(rbacDir, { recursive: true, force: true });
  });

  it("still launches labs without egress, and refuses a lab with egress, naming the permissions", async () => {
    const alice = await bff.signIn("alice");
    expect((await alice.post("/api/sessions", { labId: "plain" })).status).toBe(201);
    const refused = await alice.post("/api/sessions", { labId: "mirrors" });
    expect(refused.status).toBe(502);
    expect(refused.body.error.message).toBe(
      "The cluster refused the console's request; an operator must check its permissions.",
    );
    // Refused before its VM was made: a VM without its egress would fail the lab at every boot.
    const sessions = await alice.get("/api/sessions");
    expect(sessions.body.items.map((item: { labId: string }) => item.labId)).toEqual(["plain"]);
  });
});
