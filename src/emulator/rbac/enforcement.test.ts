// RBAC enforced by a running emulator from the files deploy/base ships: the BFF's service account (its
// kubeconfig written by the emulator) may do what its Role grants and gets Kubernetes' 403 for the rest,
// subresources and websockets included; kubectl auth can-i agrees; the admin may do everything. The
// checks stick to what that Role must always say (VMs yes, reading Secrets or making pods no), so the
// Role can change with the BFF's needs.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { openStream, UpgradeRefused } from "../testing/websocket.ts";

const execFileAsync = promisify(execFile);
const bff = "system:serviceaccount:lab-console:lab-console";
const subresources = "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions";

let cluster: TestEmulator;
let bffToken: string;

beforeAll(async () => {
  cluster = await startTestEmulator({ deployRbac: true });
  bffToken = cluster.bffKubeConfig().getCurrentUser()?.token ?? "";
});

afterAll(async () => {
  await cluster?.close();
});

const asBff = (method: string, path: string, body?: unknown) =>
  jsonRequest(cluster.emulator, method, path, body, { token: bffToken });

describe("RBAC from deploy/base", () => {
  it("lets the BFF's service account do what its Role grants, through its own kubeconfig", async () => {
    const api = cluster.bffKubeConfig().makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      group: "kubevirt.io",
      version: "v1",
      namespace: "lab-sessions",
      plural: "virtualmachines",
      body: vmManifest("bff-vm", { runStrategy: "Halted" }),
    });
    const list = (await api.listNamespacedCustomObject({
      group: "kubevirt.io",
      version: "v1",
      namespace: "lab-sessions",
      plural: "virtualmachines",
    })) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((item) => item.metadata.name)).toContain("bff-vm");
  });

  it("refuses what the Role does not grant with Kubernetes' 403", async () => {
    const secrets = await asBff("GET", "/api/v1/namespaces/lab-sessions/secrets");
    expect(secrets.status).toBe(403);
    expect(secrets.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `secrets is forbidden: User "${bff}" cannot list resource "secrets" in API group "" in the namespace "lab-sessions"`,
      reason: "Forbidden",
      details: { kind: "secrets" },
      code: 403,
    });
    expect((await asBff("GET", "/apis/kubevirt.io/v1/namespaces/default/virtualmachines")).status).toBe(403);
    expect(
      (await asBff("POST", "/api/v1/namespaces/lab-sessions/pods", { metadata: { name: "x" } })).status,
    ).toBe(403);
  });

  it("authorizes subresources: lifecycle calls as update, websockets and agent calls as get", async () => {
    const migrate = await asBff("PUT", `${subresources}/virtualmachines/bff-vm/migrate`);
    expect(migrate.status).toBe(403);
    expect((migrate.json as { message: string }).message).toBe(
      `virtualmachines.subresources.kubevirt.io "bff-vm" is forbidden: User "${bff}" cannot update resource "virtualmachines/migrate" in API group "subresources.kubevirt.io" in the namespace "lab-sessions"`,
    );
    expect((await asBff("GET", `${subresources}/virtualmachineinstances/bff-vm/userlist`)).status).toBe(403);

    const upgrade = (subresource: string) =>
      openStream(cluster.emulator, `${subresources}/virtualmachineinstances/missing-vm/${subresource}`, {
        token: bffToken,
      }).then(
        () => 101,
        (error: unknown) => (error instanceof UpgradeRefused ? error.status : Promise.reject(error)),
      );
    // Granted: the request gets as far as KubeVirt's own checks (no such VMI).
    expect(await upgrade("console")).toBe(404);
    expect(await upgrade("portforward/22")).toBe(404);
    expect(await upgrade("vnc")).toBe(404);
    expect(await upgrade("vnc/screenshot")).toBe(403);
  });

  it("answers SelfSubjectAccessReviews, and so kubectl auth can-i, from the same rules", async () => {
    const canI = async (...args: string[]) => {
      const kubectlArgs = [
        "--kubeconfig",
        cluster.bffKubeconfigPath(),
        "--cache-dir",
        join(cluster.dir, "kube-cache"),
        "auth",
        "can-i",
        ...args,
        "-n",
        "lab-sessions",
      ];
      try {
        return (await execFileAsync("kubectl", kubectlArgs, { timeout: 20_000 })).stdout.trim();
      } catch (error) {
        return (error as { stdout: string }).stdout.trim();
      }
    };
    const answers = await Promise.all([
      canI("create", "virtualmachines.kubevirt.io"),
      canI("delete", "virtualmachineinstances.kubevirt.io"),
      canI("create", "secrets"),
      canI("get", "secrets"),
      canI("create", "pods"),
      canI("create", "pods", "--subresource=exec"),
    ]);
    expect(answers).toEqual(["yes", "no", "yes", "no", "no", "no"]);

    // kubectl cannot name KubeVirt's subresource group (its discovery lists no plain resources, on a
    // real cluster too), so ask directly.
    const review = async (verb: string, subresource: string) => {
      const response = await asBff("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: {
          resourceAttributes: {
            namespace: "lab-sessions",
            verb,
            group: "subresources.kubevirt.io",
            resource: subresource === "migrate" ? "virtualmachines" : "virtualmachineinstances",
            subresource,
          },
        },
      });
      return (response.json as { status: { allowed: boolean } }).status.allowed;
    };
    expect(await review("get", "console")).toBe(true);
    expect(await review("get", "vnc")).toBe(true);
    expect(await review("get", "vnc/screenshot")).toBe(false);
    expect(await review("update", "migrate")).toBe(false);
  });

  it("lets the admin token do everything", async () => {
    expect(
      (await rawRequest(cluster.emulator, "GET", "/api/v1/namespaces/lab-sessions/secrets")).status,
    ).toBe(200);
    expect(
      (await rawRequest(cluster.emulator, "PUT", `${subresources}/virtualmachines/bff-vm/start`)).status,
    ).toBe(202);
  });
});
