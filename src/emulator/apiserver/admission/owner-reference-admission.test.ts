// OwnerReferencesPermissionEnforcement on the wire, as gc_admission.go decides it: an ownerReference
// on create (or a changed one on update) needs delete on the object itself; a blockOwnerDeletion
// reference also needs update on the owner's finalizers; the cluster config can turn the plugin off.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../../testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../testing/start.ts";

const namespace = "lab-sessions";
const secretsPath = `/api/v1/namespaces/${namespace}/secrets`;

// Three writers, each with one more permission than the last.
const policy = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: create-only, namespace: ${namespace} }
rules:
  - { apiGroups: [""], resources: [secrets], verbs: [create, update, patch, get] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: create-delete, namespace: ${namespace} }
rules:
  - { apiGroups: [""], resources: [secrets], verbs: [create, delete] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: finalizers, namespace: ${namespace} }
rules:
  - { apiGroups: [""], resources: [secrets], verbs: [create, delete] }
  - { apiGroups: [kubevirt.io], resources: [virtualmachines/finalizers], verbs: [update] }
${["create-only", "create-delete", "finalizers"]
  .map(
    (role) => `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${role}, namespace: ${namespace} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${role} }
subjects: [{ kind: User, name: ${role} }]`,
  )
  .join("\n")}
`;

const writers = ["create-only", "create-delete", "finalizers"] as const;
type Writer = (typeof writers)[number];

let policyDir: string;
let cluster: TestEmulator;
let vmUid: string;

beforeAll(async () => {
  policyDir = mkdtempSync(join(tmpdir(), "lab-owner-refs-"));
  writeFileSync(join(policyDir, "policy.yaml"), policy);
  cluster = await startTestEmulator({
    rbacFiles: [policyDir],
    tokens: writers.map((name) => ({
      token: `token-${name}`,
      username: name,
      groups: ["system:authenticated"],
    })),
  });
  const vm = await jsonRequest(
    cluster.emulator,
    "POST",
    `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`,
    vmManifest("owner", { runStrategy: "Halted" }),
  );
  vmUid = (vm.json as { metadata: { uid: string } }).metadata.uid;
});

afterAll(async () => {
  await cluster?.close();
  rmSync(policyDir, { recursive: true, force: true });
});

function secret(name: string, blockOwnerDeletion?: boolean) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      ownerReferences: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "VirtualMachine",
          name: "owner",
          uid: vmUid,
          ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
        },
      ],
    },
    data: { userdata: Buffer.from("#cloud-config\n").toString("base64") },
  };
}

const as = (writer: Writer, method: string, path: string, body: unknown) =>
  jsonRequest(cluster.emulator, method, path, body, { token: `token-${writer}` });

describe("OwnerReferencesPermissionEnforcement", () => {
  it("refuses an ownerReference on create to a writer who may not delete the object", async () => {
    const answer = await as("create-only", "POST", secretsPath, secret("a-cloudinit"));
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({
      kind: "Status",
      reason: "Forbidden",
      code: 403,
      message: `secrets "a-cloudinit" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`,
      details: { name: "a-cloudinit", kind: "secrets" },
    });
    // Authorization alone said yes: the same Secret without an owner is created.
    const plain = secret("a-cloudinit");
    plain.metadata.ownerReferences = [];
    expect((await as("create-only", "POST", secretsPath, plain)).status).toBe(201);
  });

  it("refuses adding an ownerReference on update, and allows updates that leave them alone", async () => {
    const path = `${secretsPath}/a-cloudinit`;
    const stored = (await as("create-only", "GET", path, undefined)).json as ReturnType<typeof secret>;
    const unchanged = await as("create-only", "PUT", path, { ...stored, data: { other: "eA==" } });
    expect(unchanged.status).toBe(200);
    const owned = await rawRequest(cluster.emulator, "PATCH", path, {
      token: "token-create-only",
      contentType: "application/merge-patch+json",
      body: JSON.stringify({ metadata: { ownerReferences: secret("a-cloudinit").metadata.ownerReferences } }),
    });
    expect(owned.status).toBe(403);
    expect((owned.json as { message: string }).message).toContain(
      "cannot set an ownerRef on a resource you can't delete",
    );
  });

  it("lets a writer who may delete the object set an ownerReference", async () => {
    expect((await as("create-delete", "POST", secretsPath, secret("b-cloudinit"))).status).toBe(201);
    expect((await as("create-delete", "POST", secretsPath, secret("c-cloudinit", false))).status).toBe(201);
  });

  it("asks for update on the owner's finalizers before a reference may block the owner's deletion", async () => {
    const blocked = await as("create-delete", "POST", secretsPath, secret("d-cloudinit", true));
    expect(blocked.status).toBe(403);
    expect((blocked.json as { message: string }).message).toBe(
      `secrets "d-cloudinit" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
    );
    expect((await as("finalizers", "POST", secretsPath, secret("d-cloudinit", true))).status).toBe(201);
  });
});

describe("with the plugin turned off in the cluster config", () => {
  it("lets the same writer set an ownerReference with create alone", async () => {
    const relaxed = await startTestEmulator({
      rbacFiles: [policyDir],
      tokens: [{ token: "token-create-only", username: "create-only", groups: ["system:authenticated"] }],
      cluster: { kubernetes: { disableAdmissionPlugins: ["OwnerReferencesPermissionEnforcement"] } },
    });
    try {
      const answer = await jsonRequest(relaxed.emulator, "POST", secretsPath, secret("e-cloudinit", true), {
        token: "token-create-only",
      });
      expect(answer.status).toBe(201);
    } finally {
      await relaxed.close();
    }
  });
});
