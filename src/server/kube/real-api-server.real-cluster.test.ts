// The BFF's cluster code against a real kube-apiserver v1.34 and etcd (real-cluster/), as deploy/base's
// service account: what only the API server decides, with nothing of KubeVirt running. Its RBAC as
// the doctor asks it, KubeVirt's CRD schemas against the VMs the BFF creates, the owner references
// OwnerReferencesPermissionEnforcement checks, a warm claim's JSON patch (tests included) under a
// race, and a watch from a list's resourceVersion. What the emulator's own API server claims to do.
import { CustomObjectsApi, CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startRealCluster, type RealCluster } from "../../real-cluster/testing/real-cluster.ts";
import { claimPatch } from "../classes/warm-claims.ts";
import { runDoctor } from "../doctor/doctor.ts";
import { sessionsSelector } from "../sessions/labels.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { buildSessionObjects, newSessionId } from "../sessions/vm-manifest.ts";
import { createSessionVm } from "../sessions/vm-creation.ts";
import { createClusterClient, type ClusterClient, type WatchEvent } from "./client.ts";
import { createClusterFacts } from "./cluster-facts.ts";
import { KubeStatusError } from "./errors.ts";
import { KubeRequestCounter } from "./request-counter.ts";
import type { VirtualMachine } from "./types.ts";

const namespace = "lab-sessions";
const lab = aLab();
const alice: Me = { username: "alice", role: "student", sections: ["a"] };

let cluster: RealCluster;
let bff: ClusterClient;

beforeAll(async () => {
  cluster = await startRealCluster();
  bff = createClusterClient(cluster.bff, {
    namespace,
    labelSelector: sessionsSelector,
    counter: new KubeRequestCounter(),
  });
}, 900_000);

afterAll(async () => {
  await cluster?.stop();
});

/** A VM the way a launch (an owner) or the warm pool (a class) creates it, as the BFF. */
async function createVm(owner: string | { warmFor: string }) {
  const objects = buildSessionObjects({
    sessionId: newSessionId(lab.id),
    lab,
    owner,
    section: typeof owner === "string" ? "a" : null,
    namespace,
    expiresAt: typeof owner === "string" ? new Date(Date.now() + 3_600_000) : undefined,
  });
  const created = await createSessionVm(bff, objects);
  return { objects, created };
}

/** The VM as stored, read by the administrator (nothing of the BFF's own reading in between). */
async function storedVm(name: string): Promise<VirtualMachine> {
  const api = cluster.admin.makeApiClient(CustomObjectsApi);
  return (await api.getNamespacedCustomObject({
    group: "kubevirt.io",
    version: "v1",
    namespace,
    plural: "virtualmachines",
    name,
  })) as VirtualMachine;
}

describe("the BFF's cluster code on a real API server", () => {
  it("has every permission deploy/base grants it, and none of those it must not, as the doctor asks", async () => {
    const report = await runDoctor(createClusterFacts(cluster.bff, new KubeRequestCounter()), {
      vmNamespace: namespace,
      leaseNamespace: "lab-console",
    });
    const permissions = report.checks.find((check) => check.id === "permissions");
    expect(permissions, JSON.stringify(report.checks)).toMatchObject({ status: "ok" });
    const version = report.checks.find((check) => check.id === "cluster");
    expect(JSON.stringify(version ?? report.checks)).toContain("1.34");
  });

  it("creates a session's VM that KubeVirt's schema keeps whole, and its user data owned by it", async () => {
    const { objects, created } = await createVm(alice.username);
    const name = created.metadata.name!;
    const vm = await storedVm(name);
    // A field KubeVirt's structural schema does not know would be pruned, silently.
    expect(vm.spec).toEqual(objects.virtualMachine.spec);
    expect(vm.metadata.labels).toEqual(objects.virtualMachine.metadata.labels);
    expect(vm.metadata.annotations).toMatchObject(objects.virtualMachine.metadata.annotations ?? {});

    const core = cluster.admin.makeApiClient(CoreV1Api);
    const secret = await core.readNamespacedSecret({
      namespace,
      name: objects.userDataSecret.metadata.name!,
    });
    // Accepted from the console's account under OwnerReferencesPermissionEnforcement: it asks for no
    // blockOwnerDeletion, which would need update on virtualmachines/finalizers.
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: "kubevirt.io/v1",
        kind: "VirtualMachine",
        name,
        uid: vm.metadata.uid,
      }),
    ]);
  });

  it("refuses to let the BFF create pods where the VMs run", async () => {
    const core = cluster.bff.makeApiClient(CoreV1Api);
    const pod = {
      metadata: { name: "not-allowed" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    };
    await expect(core.createNamespacedPod({ namespace, body: pod })).rejects.toMatchObject({ code: 403 });
  });

  it("gives a warm VM to one of two launches that claim it at once", async () => {
    const classId = "class-1";
    const { created } = await createVm({ warmFor: classId });
    const name = created.metadata.name!;
    const claim = (username: string) =>
      bff.patchVirtualMachine(
        name,
        claimPatch({
          classId,
          user: { ...alice, username },
          expiresAt: new Date(Date.now() + 3_600_000),
          claimedAt: new Date().toISOString(),
        }),
      );
    const [first, second] = await Promise.allSettled([claim("alice"), claim("bob")]);
    const outcomes = [first, second].map((each) =>
      each.status === "fulfilled" ? 200 : (each.reason as KubeStatusError).statusCode,
    );
    expect(outcomes.sort()).toEqual([200, 422]);
    const winner = first.status === "fulfilled" ? "alice" : "bob";
    const vm = await storedVm(name);
    expect(vm.metadata.annotations?.["labconsole.dev/owner"]).toBe(winner);
    expect(vm.metadata.labels?.["labconsole.dev/warm-for"]).toBeUndefined();

    // Claimed already: a third launch's claim fails its test too.
    await expect(claim("carol")).rejects.toBeInstanceOf(KubeStatusError);
  });

  it("watches the console's VMs from a list's resourceVersion", async () => {
    const { resourceVersion } = await bff.virtualMachines.list();
    const events: WatchEvent<VirtualMachine>[] = [];
    const stop = new AbortController();
    let closedWith: unknown = "open";
    await bff.virtualMachines.watch(
      resourceVersion,
      (event) => events.push(event),
      (error) => (closedWith = error),
      stop.signal,
    );
    try {
      const { created } = await createVm(alice.username);
      await eventually(
        async () => events,
        (seen) =>
          seen.some(
            (event) => event.type === "ADDED" && event.object.metadata.name === created.metadata.name,
          ),
        { what: "the new VM in the watch" },
      );
      expect(closedWith).toBe("open");
    } finally {
      stop.abort();
    }
  });
});
