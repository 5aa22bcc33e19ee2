// coordination.k8s.io/v1 Leases through @kubernetes/client-node and kubectl: discovery, CRUD with
// optimistic concurrency, MicroTime decoding as the API server does it, validation and watch.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { CoordinationV1Api, V1MicroTime, Watch, type V1Lease } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonRequest } from "../../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../testing/start.ts";

const namespace = "lab-console";
let cluster: TestEmulator;
let leases: CoordinationV1Api;

function lease(name: string, spec: V1Lease["spec"]): V1Lease {
  return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace }, spec };
}

beforeAll(async () => {
  cluster = await startTestEmulator();
  leases = cluster.kubeConfig.makeApiClient(CoordinationV1Api);
});

afterAll(async () => {
  await cluster.close();
});

describe("Leases", () => {
  it("are discoverable in coordination.k8s.io/v1, and lab-console exists from the start", async () => {
    const groups = (await jsonRequest(cluster.emulator, "GET", "/apis")).json as {
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    };
    expect(groups.groups.find((group) => group.name === "coordination.k8s.io")?.preferredVersion).toEqual({
      groupVersion: "coordination.k8s.io/v1",
      version: "v1",
    });
    const list = (await jsonRequest(cluster.emulator, "GET", "/apis/coordination.k8s.io/v1")).json as {
      resources: { name: string; namespaced: boolean; kind: string; verbs: string[] }[];
    };
    expect(list.resources).toEqual([
      {
        name: "leases",
        singularName: "lease",
        namespaced: true,
        kind: "Lease",
        verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      },
    ]);
    const labConsole = await jsonRequest(cluster.emulator, "GET", "/api/v1/namespaces/lab-console");
    expect(labConsole.status).toBe(200);
  });

  it("store MicroTimes in UTC with six digits and refuse a JavaScript Date's three, as the API server does", async () => {
    const renewTime = new V1MicroTime("2025-03-01T10:00:00.123Z");
    const created = await leases.createNamespacedLease({
      namespace,
      body: lease("micro", {
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        renewTime,
        acquireTime: renewTime,
      }),
    });
    // client-node leaves MicroTimes as the strings the server sent (its serializer has no such type).
    expect(String(created.spec?.renewTime)).toBe("2025-03-01T10:00:00.123000Z");
    const raw = await jsonRequest(
      cluster.emulator,
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/micro`,
    );
    expect((raw.json as { spec: { renewTime: string } }).spec.renewTime).toBe("2025-03-01T10:00:00.123000Z");
    expect((raw.json as { metadata: { generation?: number } }).metadata.generation).toBeUndefined();

    const offset = await jsonRequest(
      cluster.emulator,
      "POST",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      {
        ...lease("offset", {}),
        spec: { renewTime: "2025-03-01T12:00:00.000001+02:00" },
      },
    );
    expect((offset.json as { spec: { renewTime: string } }).spec.renewTime).toBe(
      "2025-03-01T10:00:00.000001Z",
    );

    const millis = await jsonRequest(
      cluster.emulator,
      "POST",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      {
        ...lease("millis", {}),
        spec: { renewTime: "2025-03-01T10:00:00.123Z" },
      },
    );
    expect(millis.status).toBe(400);
    expect((millis.json as { message: string }).message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2025-03-01T10:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
  });

  it("validate the spec with the API server's messages", async () => {
    const answer = await jsonRequest(
      cluster.emulator,
      "POST",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      lease("bad", { leaseDurationSeconds: 0, leaseTransitions: -1 }),
    );
    expect(answer.status).toBe(422);
    expect((answer.json as { message: string }).message).toBe(
      'Lease.coordination.k8s.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
    );
  });

  it("refuse a stale resourceVersion on update and delete, and take an update without one", async () => {
    const created = await leases.createNamespacedLease({
      namespace,
      body: lease("occ", { holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 }),
    });
    const renewed = await leases.replaceNamespacedLease({
      name: "occ",
      namespace,
      body: { ...created, spec: { ...created.spec, renewTime: new V1MicroTime() } },
    });
    expect(renewed.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);

    // A second candidate still holding the first read loses the race.
    await expect(
      leases.replaceNamespacedLease({
        name: "occ",
        namespace,
        body: { ...created, spec: { ...created.spec, holderIdentity: "b", leaseTransitions: 1 } },
      }),
    ).rejects.toMatchObject({ code: 409 });
    await expect(
      leases.deleteNamespacedLease({
        name: "occ",
        namespace,
        body: { preconditions: { resourceVersion: created.metadata?.resourceVersion } },
      }),
    ).rejects.toMatchObject({ code: 409 });

    // Built-in kinds allow unconditional updates (custom resources would answer 422).
    const { resourceVersion: _rv, ...metadata } = renewed.metadata ?? {};
    const forced = await leases.replaceNamespacedLease({
      name: "occ",
      namespace,
      body: { ...renewed, metadata, spec: { ...renewed.spec, holderIdentity: "c" } },
    });
    expect(forced.spec?.holderIdentity).toBe("c");
    await leases.deleteNamespacedLease({
      name: "occ",
      namespace,
      body: { preconditions: { resourceVersion: forced.metadata?.resourceVersion } },
    });
    await expect(leases.readNamespacedLease({ name: "occ", namespace })).rejects.toMatchObject({ code: 404 });
  });

  it("are watched: a new holder arrives as MODIFIED, a release as DELETED", async () => {
    const created = await leases.createNamespacedLease({
      namespace,
      body: lease("watched", { holderIdentity: "a", leaseDurationSeconds: 15 }),
    });
    const events: string[] = [];
    const controller = await new Watch(cluster.kubeConfig).watch(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      { resourceVersion: created.metadata?.resourceVersion, fieldSelector: "metadata.name=watched" },
      (type, object: V1Lease) => events.push(`${type} ${object.spec?.holderIdentity ?? ""}`),
      () => undefined,
    );
    try {
      const taken = await leases.replaceNamespacedLease({
        name: "watched",
        namespace,
        body: { ...created, spec: { ...created.spec, holderIdentity: "b" } },
      });
      await leases.deleteNamespacedLease({
        name: "watched",
        namespace,
        body: { preconditions: { resourceVersion: taken.metadata?.resourceVersion } },
      });
      await eventually(() => (events.length === 2 ? true : undefined), { what: "two watch events" });
      expect(events).toEqual(["MODIFIED b", "DELETED b"]);
    } finally {
      controller.abort();
    }
  });

  it("show their holder in kubectl get", async () => {
    await leases.createNamespacedLease({
      namespace,
      body: lease("lab-console-reaper", { holderIdentity: "replica-1", leaseDurationSeconds: 15 }),
    });
    const { stdout } = await promisify(execFile)(
      "kubectl",
      [
        "--kubeconfig",
        cluster.emulator.kubeconfigPath,
        "--cache-dir",
        join(cluster.dir, "kube-cache"),
        "get",
        "lease",
        "lab-console-reaper",
        "-n",
        namespace,
      ],
      { timeout: 20_000 },
    );
    expect(stdout.split("\n")[0]).toMatch(/^NAME\s+HOLDER\s+AGE$/);
    expect(stdout.split("\n")[1]).toMatch(/^lab-console-reaper\s+replica-1\s+\d+s$/);
  });
});
