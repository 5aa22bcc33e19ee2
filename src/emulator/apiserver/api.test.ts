// The emulator's API on the wire: discovery, authentication and authorization, CRUD semantics,
// admission and the error replies for bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Authorizer } from "../rbac/attributes.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const vms = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";

// The student may read VMs in lab-sessions and nothing else.
const studentOnly: Authorizer = {
  authorize: (user, attributes) => {
    if (user.username !== "student") return { allowed: true, reason: "" };
    // Everyone may ask what they may do (system:basic-user).
    if (attributes.kind === "resource" && attributes.resource === "selfsubjectaccessreviews") {
      return { allowed: true, reason: "" };
    }
    const allowed =
      attributes.kind === "resource" &&
      attributes.resource === "virtualmachines" &&
      attributes.namespace === "lab-sessions" &&
      ["get", "list"].includes(attributes.verb);
    return { allowed, reason: "" };
  },
};

let cluster: TestEmulator;

beforeAll(async () => {
  cluster = await startTestEmulator({
    authorizer: studentOnly,
    tokens: [{ token: "student-token", username: "student", groups: ["students"] }],
  });
});

afterAll(async () => {
  await cluster.close();
});

describe("discovery and openapi", () => {
  it("serves /version without a token and everything else only with one", async () => {
    const version = await rawRequest(cluster.emulator, "GET", "/version", { token: null });
    expect(version.status).toBe(200);
    expect(version.json).toMatchObject({ major: "1", minor: "34", gitVersion: "v1.34.1" });
    const anonymous = await rawRequest(cluster.emulator, "GET", "/api/v1/namespaces", { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 });
    const wrong = await rawRequest(cluster.emulator, "GET", "/api/v1/namespaces", { token: "nope" });
    expect(wrong.status).toBe(401);
  });

  it("lists KubeVirt's kinds with their short names and subresources", async () => {
    const list = await jsonRequest(cluster.emulator, "GET", "/apis/kubevirt.io/v1");
    const resources = (list.json as { resources: { name: string; shortNames?: string[] }[] }).resources;
    expect(resources.find((resource) => resource.name === "virtualmachines")?.shortNames).toEqual([
      "vm",
      "vms",
    ]);
    expect(resources.find((resource) => resource.name === "virtualmachineinstances")?.shortNames).toEqual([
      "vmi",
      "vmis",
    ]);
    expect(resources.map((resource) => resource.name)).toContain("virtualmachines/status");
    const subresources = await jsonRequest(cluster.emulator, "GET", "/apis/subresources.kubevirt.io/v1");
    expect(JSON.stringify(subresources.json)).toContain("virtualmachineinstances/console");
    const groups = await jsonRequest(cluster.emulator, "GET", "/apis");
    expect(JSON.stringify(groups.json)).toContain('"name":"kubevirt.io"');
  });

  it("publishes OpenAPI v3 with fieldValidation on PATCH and merge patch only for KubeVirt kinds", async () => {
    const index = (await jsonRequest(cluster.emulator, "GET", "/openapi/v3")).json as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const url = index.paths["apis/kubevirt.io/v1"]?.serverRelativeURL ?? "";
    expect(url).toMatch(/^\/openapi\/v3\/apis\/kubevirt\.io\/v1\?hash=[0-9A-F]+$/);
    const document = (await jsonRequest(cluster.emulator, "GET", url)).json as {
      paths: Record<
        string,
        { patch?: { parameters: { name: string }[]; requestBody: { content: Record<string, unknown> } } }
      >;
      components: { schemas: Record<string, unknown> };
    };
    const patch = document.paths["/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}"]?.patch;
    expect(patch?.parameters.map((parameter) => parameter.name)).toContain("fieldValidation");
    expect(Object.keys(patch?.requestBody.content ?? {})).not.toContain(
      "application/strategic-merge-patch+json",
    );
    expect(JSON.stringify(document.components.schemas["v1.VirtualMachine"])).toContain(
      '"kind":"VirtualMachine"',
    );
    expect(JSON.stringify(document)).not.toContain("#/definitions/");
  });

  it("reports Kubernetes feature gates in /metrics", async () => {
    const metrics = await rawRequest(cluster.emulator, "GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 0');
  });
});

describe("authorization", () => {
  it("answers 403 worded like Kubernetes and lets allowed requests through", async () => {
    const denied = await jsonRequest(cluster.emulator, "DELETE", `${vms}/some-vm`, undefined, {
      token: "student-token",
    });
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({
      reason: "Forbidden",
      message:
        'virtualmachines.kubevirt.io "some-vm" is forbidden: User "student" cannot delete resource "virtualmachines" in API group "kubevirt.io" in the namespace "lab-sessions"',
    });
    const allowed = await jsonRequest(cluster.emulator, "GET", vms, undefined, { token: "student-token" });
    expect(allowed.status).toBe(200);
  });

  it("answers SelfSubjectAccessReviews from the same authorizer", async () => {
    const review = (verb: string) => ({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: {
          namespace: "lab-sessions",
          verb,
          group: "kubevirt.io",
          resource: "virtualmachines",
        },
      },
    });
    const path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    const list = await jsonRequest(cluster.emulator, "POST", path, review("list"), {
      token: "student-token",
    });
    expect(list.status).toBe(201);
    expect(list.json).toMatchObject({ status: { allowed: true } });
    const create = await jsonRequest(cluster.emulator, "POST", path, review("create"), {
      token: "student-token",
    });
    expect(create.json).toMatchObject({ status: { allowed: false } });
  });

  it("authenticates and authorizes websocket upgrades before looking for the VMI", async () => {
    const { request } = await import("node:https");
    const upgrade = (token: string | null) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(
          "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/x/console",
          cluster.emulator.url,
        );
        const ca = cluster.kubeConfig.getCurrentCluster()?.caData ?? "";
        const req = request(url, {
          ca: Buffer.from(ca, "base64"),
          headers: {
            connection: "Upgrade",
            upgrade: "websocket",
            "sec-websocket-version": "13",
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
        });
        req.on("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        req.on("upgrade", () => reject(new Error("unexpected upgrade")));
        req.on("error", reject);
        req.end();
      });
    expect(await upgrade(null)).toBe(401);
    expect(await upgrade("student-token")).toBe(403);
    expect(await upgrade(cluster.emulator.adminToken)).toBe(404);
  });
});

describe("objects", () => {
  it("sets server-side metadata and refuses a name that is taken", async () => {
    const created = await jsonRequest(
      cluster.emulator,
      "POST",
      vms,
      vmManifest("meta-vm", { runStrategy: "Halted" }),
    );
    expect(created.status).toBe(201);
    const metadata = (created.json as { metadata: Record<string, unknown> }).metadata;
    expect(metadata).toMatchObject({ name: "meta-vm", namespace: "lab-sessions", generation: 1 });
    expect(metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(metadata.resourceVersion).toMatch(/^\d+$/);
    const again = await jsonRequest(
      cluster.emulator,
      "POST",
      vms,
      vmManifest("meta-vm", { runStrategy: "Halted" }),
    );
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({
      reason: "AlreadyExists",
      message: 'virtualmachines.kubevirt.io "meta-vm" already exists',
    });
  });

  it("updates with optimistic concurrency, bumps generation on spec changes and keeps status", async () => {
    await jsonRequest(cluster.emulator, "POST", vms, vmManifest("occ-vm", { runStrategy: "Halted" }));
    const current = await eventually(async () => {
      const vm = (await jsonRequest(cluster.emulator, "GET", `${vms}/occ-vm`)).json as {
        status?: { printableStatus?: string };
      };
      return vm.status?.printableStatus === "Stopped" ? vm : undefined;
    });
    const stale = structuredClone(current) as {
      metadata: { resourceVersion: string };
      spec: { runStrategy: string };
      status: unknown;
    };
    stale.spec.runStrategy = "Manual";
    stale.status = { printableStatus: "Hacked" };
    const updated = await jsonRequest(cluster.emulator, "PUT", `${vms}/occ-vm`, stale);
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      metadata: { generation: 2 },
      spec: { runStrategy: "Manual" },
      status: { printableStatus: "Stopped" },
    });
    const conflict = await jsonRequest(cluster.emulator, "PUT", `${vms}/occ-vm`, stale);
    expect(conflict.status).toBe(409);
    expect(conflict.json).toMatchObject({
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on virtualmachines.kubevirt.io "occ-vm": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it("applies merge patches and JSON patches, and refuses strategic merge patches on custom resources", async () => {
    await jsonRequest(cluster.emulator, "POST", vms, vmManifest("patch-vm", { runStrategy: "Halted" }));
    const merge = await rawRequest(cluster.emulator, "PATCH", `${vms}/patch-vm`, {
      body: JSON.stringify({ metadata: { labels: { app: null, course: "net" } } }),
      contentType: "application/merge-patch+json",
    });
    expect(merge.status).toBe(200);
    expect((merge.json as { metadata: { labels: unknown } }).metadata.labels).toEqual({ course: "net" });
    const testFails = await rawRequest(cluster.emulator, "PATCH", `${vms}/patch-vm`, {
      body: JSON.stringify([
        { op: "test", path: "/spec/runStrategy", value: "Always" },
        { op: "replace", path: "/spec/runStrategy", value: "Manual" },
      ]),
      contentType: "application/json-patch+json",
    });
    expect(testFails.status).toBe(422);
    const jsonPatched = await rawRequest(cluster.emulator, "PATCH", `${vms}/patch-vm`, {
      body: JSON.stringify([
        { op: "test", path: "/spec/runStrategy", value: "Halted" },
        { op: "replace", path: "/spec/runStrategy", value: "Manual" },
      ]),
      contentType: "application/json-patch+json",
    });
    expect(jsonPatched.json).toMatchObject({ spec: { runStrategy: "Manual" } });
    const strategic = await rawRequest(cluster.emulator, "PATCH", `${vms}/patch-vm`, {
      body: "{}",
      contentType: "application/strategic-merge-patch+json",
    });
    expect(strategic.status).toBe(415);
  });

  it("lists with label and field selectors, and pages with limit and continue", async () => {
    for (const name of ["page-a", "page-b", "page-c"]) {
      await jsonRequest(
        cluster.emulator,
        "POST",
        vms,
        vmManifest(name, { runStrategy: "Halted", labels: { page: "yes", name } }),
      );
    }
    const selected = await jsonRequest(
      cluster.emulator,
      "GET",
      `${vms}?labelSelector=page%3Dyes,name%20notin%20(page-b)`,
    );
    expect(
      (selected.json as { items: { metadata: { name: string } }[] }).items.map((vm) => vm.metadata.name),
    ).toEqual(["page-a", "page-c"]);
    const byName = await jsonRequest(cluster.emulator, "GET", `${vms}?fieldSelector=metadata.name%3Dpage-b`);
    expect((byName.json as { items: unknown[] }).items).toHaveLength(1);
    const first = (await jsonRequest(cluster.emulator, "GET", `${vms}?labelSelector=page%3Dyes&limit=2`))
      .json as {
      metadata: { continue: string; remainingItemCount: number };
      items: { metadata: { name: string } }[];
    };
    expect(first.items.map((vm) => vm.metadata.name)).toEqual(["page-a", "page-b"]);
    expect(first.metadata.remainingItemCount).toBe(1);
    const rest = (
      await jsonRequest(
        cluster.emulator,
        "GET",
        `${vms}?labelSelector=page%3Dyes&limit=2&continue=${first.metadata.continue}`,
      )
    ).json as { items: { metadata: { name: string } }[]; metadata: { continue?: string } };
    expect(rest.items.map((vm) => vm.metadata.name)).toEqual(["page-c"]);
    expect(rest.metadata.continue).toBeUndefined();
  });

  it("deletes dependents whose ownerReferences name a deleted object", async () => {
    const vm = (
      await jsonRequest(cluster.emulator, "POST", vms, vmManifest("gc-vm", { runStrategy: "Halted" }))
    ).json as {
      metadata: { uid: string };
    };
    const secret = await jsonRequest(cluster.emulator, "POST", "/api/v1/namespaces/lab-sessions/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "gc-vm-cloudinit",
        ownerReferences: [
          { apiVersion: "kubevirt.io/v1", kind: "VirtualMachine", name: "gc-vm", uid: vm.metadata.uid },
        ],
      },
      stringData: { userdata: "#cloud-config\n" },
    });
    expect(secret.status).toBe(201);
    expect(secret.json).toMatchObject({
      type: "Opaque",
      data: { userdata: Buffer.from("#cloud-config\n").toString("base64") },
    });
    expect(secret.json).not.toHaveProperty("stringData");
    const preconditionFails = await jsonRequest(cluster.emulator, "DELETE", `${vms}/gc-vm`, {
      preconditions: { uid: "other" },
    });
    expect(preconditionFails.status).toBe(409);
    expect((await jsonRequest(cluster.emulator, "DELETE", `${vms}/gc-vm`)).status).toBe(200);
    await eventually(
      async () => {
        const response = await jsonRequest(
          cluster.emulator,
          "GET",
          "/api/v1/namespaces/lab-sessions/secrets/gc-vm-cloudinit",
        );
        return response.status === 404 ? true : undefined;
      },
      { what: "the owned secret to be collected" },
    );
  });

  it("requires the namespace to exist, and empties and removes a deleted namespace", async () => {
    const missing = await jsonRequest(
      cluster.emulator,
      "POST",
      "/apis/kubevirt.io/v1/namespaces/nope/virtualmachines",
      vmManifest("x", { namespace: "nope" }),
    );
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ message: 'namespaces "nope" not found' });
    await jsonRequest(cluster.emulator, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "course-a" },
    });
    await jsonRequest(
      cluster.emulator,
      "POST",
      "/apis/kubevirt.io/v1/namespaces/course-a/virtualmachines",
      vmManifest("ns-vm", { namespace: "course-a" }),
    );
    const deleted = await jsonRequest(cluster.emulator, "DELETE", "/api/v1/namespaces/course-a");
    expect(deleted.json).toMatchObject({ status: { phase: "Terminating" } });
    await eventually(
      async () =>
        (await jsonRequest(cluster.emulator, "GET", "/api/v1/namespaces/course-a")).status === 404
          ? true
          : undefined,
      {
        what: "the namespace to go away",
      },
    );
    expect(
      (
        await jsonRequest(
          cluster.emulator,
          "GET",
          "/apis/kubevirt.io/v1/namespaces/course-a/virtualmachines/ns-vm",
        )
      ).status,
    ).toBe(404);
  });
});

describe("admission", () => {
  it("requires exactly one of running and runStrategy, as KubeVirt's webhook does", async () => {
    const both = vmManifest("both-vm");
    (both.spec as Record<string, unknown>).running = true;
    const bothResponse = await jsonRequest(cluster.emulator, "POST", vms, both);
    expect(bothResponse.status).toBe(422);
    expect(bothResponse.json).toMatchObject({
      reason: "Invalid",
      message:
        'admission webhook "virtualmachine-validator.kubevirt.io" denied the request: Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead',
      details: { causes: [{ field: "spec.running" }] },
    });
    const neither = vmManifest("neither-vm");
    delete (neither.spec as Record<string, unknown>).runStrategy;
    const neitherResponse = await jsonRequest(cluster.emulator, "POST", vms, neither);
    expect(neitherResponse.status).toBe(422);
    expect((neitherResponse.json as { message: string }).message).toContain("RunStrategy must be specified");
  });

  it("warns about the deprecated spec.running", async () => {
    const response = await jsonRequest(
      cluster.emulator,
      "POST",
      vms,
      vmManifest("running-vm", { running: false }),
    );
    expect(response.status).toBe(201);
    expect(response.headers.warning).toBe(
      '299 - "spec.running is deprecated, please use spec.runStrategy instead."',
    );
  });

  it("rejects fields of the wrong type with 422 causes", async () => {
    const manifest = vmManifest("typed-vm");
    (manifest.spec as Record<string, unknown>).runStrategy = 7;
    const response = await jsonRequest(cluster.emulator, "POST", vms, manifest);
    expect(response.status).toBe(422);
    expect(response.json).toMatchObject({
      message:
        'VirtualMachine.kubevirt.io "typed-vm" is invalid: spec.runStrategy: Invalid value: "integer": spec.runStrategy in body must be of type string: "integer"',
      details: { causes: [{ reason: "FieldValueInvalid", field: "spec.runStrategy" }] },
    });
  });

  it("prunes unknown fields with a warning, or refuses them with fieldValidation=Strict", async () => {
    const manifest = vmManifest("unknown-vm", { runStrategy: "Halted" });
    (manifest.spec as Record<string, unknown>).colour = "blue";
    const strict = await jsonRequest(cluster.emulator, "POST", `${vms}?fieldValidation=Strict`, manifest);
    expect(strict.status).toBe(400);
    expect((strict.json as { message: string }).message).toBe(
      'VirtualMachine in version "v1" cannot be handled as a VirtualMachine: strict decoding error: unknown field "spec.colour"',
    );
    const lenient = await jsonRequest(cluster.emulator, "POST", vms, manifest);
    expect(lenient.status).toBe(201);
    expect(lenient.headers.warning).toBe('299 - "unknown field \\"spec.colour\\""');
    expect(lenient.json).not.toHaveProperty("spec.colour");
  });

  it("rejects names that are not RFC 1123 with 422 causes", async () => {
    const response = await jsonRequest(cluster.emulator, "POST", vms, vmManifest("Bad_Name"));
    expect(response.status).toBe(422);
    expect(response.json).toMatchObject({
      reason: "Invalid",
      details: { causes: [{ field: "metadata.name", reason: "FieldValueInvalid" }] },
    });
    expect((response.json as { message: string }).message).toContain(
      "a lowercase RFC 1123 subdomain must consist of",
    );
  });
});

describe("watch", () => {
  it("serves the legacy /watch/ paths and ends initial events with a bookmark when asked", async () => {
    await jsonRequest(
      cluster.emulator,
      "POST",
      vms,
      vmManifest("legacy-watch-vm", { runStrategy: "Halted" }),
    );
    const response = await rawRequest(
      cluster.emulator,
      "GET",
      "/apis/kubevirt.io/v1/watch/namespaces/lab-sessions/virtualmachines/legacy-watch-vm?timeoutSeconds=1&sendInitialEvents=true&allowWatchBookmarks=true",
    );
    expect(response.status).toBe(200);
    const events = response.text
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            object: { metadata: { name?: string; annotations?: Record<string, string> } };
          },
      );
    expect(events[0]).toMatchObject({ type: "ADDED", object: { metadata: { name: "legacy-watch-vm" } } });
    expect(events.filter((event) => event.type === "ADDED")).toHaveLength(1);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "BOOKMARK",
        object: expect.objectContaining({
          metadata: expect.objectContaining({ annotations: { "k8s.io/initial-events-end": "true" } }),
        }),
      }),
    );
  });

  it("serves kubectl's Table format for lists", async () => {
    const table = await rawRequest(cluster.emulator, "GET", `${vms}?labelSelector=page%3Dnothing`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    expect(table.json).toMatchObject({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      columnDefinitions: [{ name: "Name" }, { name: "Age" }, { name: "Status" }, { name: "Ready" }],
      rows: [],
    });
  });
});

describe("bad input", () => {
  it("answers malformed JSON and YAML with 400 and unknown resources with 404", async () => {
    const json = await rawRequest(cluster.emulator, "POST", vms, {
      body: "{not json",
      contentType: "application/json",
    });
    expect(json.status).toBe(400);
    expect(json.json).toMatchObject({ kind: "Status", reason: "BadRequest" });
    const yaml = await rawRequest(cluster.emulator, "POST", vms, {
      body: "a: [b\n",
      contentType: "application/yaml",
    });
    expect(yaml.status).toBe(400);
    const unknown = await rawRequest(
      cluster.emulator,
      "GET",
      "/apis/kubevirt.io/v1/namespaces/lab-sessions/teapots",
    );
    expect(unknown.status).toBe(404);
    const notAnObject = await rawRequest(cluster.emulator, "POST", vms, {
      body: "[1,2]",
      contentType: "application/json",
    });
    expect(notAnObject.status).toBe(400);
    // Protobuf is read only for the core kinds kubectl sends that way; a VirtualMachine in it is 415.
    const field = (number: number, value: Buffer) =>
      Buffer.concat([Buffer.from([number * 8 + 2, value.length]), value]);
    const typeMeta = Buffer.concat([
      field(1, Buffer.from("kubevirt.io/v1")),
      field(2, Buffer.from("VirtualMachine")),
    ]);
    const protobuf = await rawRequest(cluster.emulator, "POST", vms, {
      body: Buffer.concat([Buffer.from("k8s\0", "latin1"), field(1, typeMeta)]),
      contentType: "application/vnd.kubernetes.protobuf",
    });
    expect(protobuf.status).toBe(415);
    const garbage = await rawRequest(cluster.emulator, "POST", vms, {
      body: "x",
      contentType: "application/vnd.kubernetes.protobuf",
    });
    expect(garbage.status).toBe(400);
  });

  it("refuses bodies over 3 MiB with 413 and keeps serving", async () => {
    const huge = JSON.stringify({ padding: "x".repeat(3 * 1024 * 1024) });
    const response = await rawRequest(cluster.emulator, "POST", vms, {
      body: huge,
      contentType: "application/json",
    });
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: 413, message: "Request entity too large: limit is 3145728" });
    expect((await rawRequest(cluster.emulator, "GET", "/healthz", { token: null })).text).toBe("ok");
  });

  it("survives garbage in every part of a request", async () => {
    const attempts = [
      rawRequest(cluster.emulator, "GET", `${vms}?labelSelector=%%%`),
      rawRequest(cluster.emulator, "GET", `${vms}?watch=true&resourceVersion=abc`),
      rawRequest(cluster.emulator, "GET", `${vms}?watch=true&timeoutSeconds=-1`),
      rawRequest(cluster.emulator, "PUT", `${vms}/x`, { body: "null", contentType: "application/json" }),
      rawRequest(cluster.emulator, "PATCH", `${vms}/meta-vm`, {
        body: '"text"',
        contentType: "application/json-patch+json",
      }),
      rawRequest(cluster.emulator, "GET", `${vms}?continue=garbage&limit=1`),
      rawRequest(cluster.emulator, "POST", vms, {
        body: JSON.stringify({ apiVersion: "v1", kind: "Secret" }),
        contentType: "application/json",
      }),
      rawRequest(
        cluster.emulator,
        "PUT",
        "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachines/meta-vm/start",
        {
          body: "{broken",
          contentType: "application/json",
        },
      ),
    ];
    const statuses = (await Promise.all(attempts)).map((response) => response.status);
    for (const status of statuses) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
    }
    expect((await rawRequest(cluster.emulator, "GET", "/healthz", { token: null })).status).toBe(200);
  });
});
