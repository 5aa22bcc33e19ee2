// The emulator's subresources.kubevirt.io as an aggregated API server behind a real kube-apiserver
// v1.34: registered as virt-operator registers virt-api, called Available by kube-aggregator, reached
// through kube-apiserver by deploy/base's service account, with each request's user taken from the
// front proxy's headers and checked with a SubjectAccessReview. The handlers run over the emulator's
// own in-memory Registry, as in the emulator.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startRealCluster, type RealCluster } from "../../real-cluster/testing/real-cluster.ts";
import { Registry } from "../apiserver/registry.ts";
import { ObjectStore } from "../apiserver/store.ts";
import { parseClusterConfig } from "../cluster/cluster-config.ts";
import { EventRecorder } from "../controller/events.ts";
import { noGuests } from "../guests/guest-runtime.ts";
import { UpgradeRoutes } from "../http/upgrade.ts";
import { createKubevirtSubresources } from "../subresources/routes.ts";
import { ConsoleStreams } from "../subresources/console.ts";
import { VmiPauses } from "../subresources/pause.ts";
import { createKubevirtUpgrader } from "../subresources/websocket.ts";
import { registerSubresourcesApiService } from "./api-service-registration.ts";
import { RemoteApi } from "../remote/remote-api.ts";
import { startSubresourcesServer, type SubresourcesServer } from "./subresources-server.ts";

const run = promisify(execFile);
const namespace = "lab-sessions";
const pausePath = `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/missing/pause`;

let cluster: RealCluster;
let server: SubresourcesServer;
let scratch: string;
let adminKubeconfig: string;
let pauses: VmiPauses;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run("kubectl", ["--kubeconfig", adminKubeconfig, ...args]);
  return stdout;
}

/** A service account in lab-sessions with no rights at all, and a kubeconfig with its token. */
async function accountWithoutRights(): Promise<KubeConfig> {
  const admin = new RemoteApi(cluster.admin).request;
  await admin("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: "nobody" } });
  const answer = await admin("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/nobody/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  const token = (answer.body as { status: { token: string } }).status.token;
  const config = new KubeConfig();
  const current = cluster.admin.getCurrentCluster();
  if (current === null) throw new Error("the admin kubeconfig has no cluster");
  config.loadFromOptions({
    clusters: [current],
    users: [{ name: "nobody", token }],
    contexts: [{ name: "nobody", cluster: current.name, user: "nobody" }],
    currentContext: "nobody",
  });
  return config;
}

/** A request straight to the aggregated server, as kube-apiserver's proxy makes it (or without its certificate). */
function callDirectly(
  method: string,
  path: string,
  options: { frontProxy: boolean; headers?: Record<string, string> },
): Promise<{ status: number; text: string }> {
  const { certFile, keyFile } = cluster.plane.frontProxyClient;
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: server.host,
        port: server.port,
        path,
        method,
        servername: "virt-api.kubevirt.svc",
        ca: server.caBundlePem,
        ...(options.frontProxy ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : {}),
        headers: options.headers,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

beforeAll(async () => {
  cluster = await startRealCluster();
  scratch = await mkdtemp(path.join(tmpdir(), "lab-aggregation-"));
  adminKubeconfig = path.join(scratch, "admin.kubeconfig");
  await writeFile(adminKubeconfig, cluster.admin.exportConfig());

  // The emulator's own state, as emulator.ts builds it: no guests, so no VMI ever runs.
  const registry = new Registry(new ObjectStore(1000));
  pauses = new VmiPauses({
    registry,
    guests: noGuests,
    recorder: new EventRecorder(registry),
    conditionLagMs: 0,
  });
  const upgrades = new UpgradeRoutes();
  upgrades.register(
    "virtualmachineinstances/console",
    new ConsoleStreams(registry, noGuests, createKubevirtUpgrader()).handle,
  );
  const subresources = createKubevirtSubresources({
    config: parseClusterConfig(undefined),
    registry,
    guests: noGuests,
    pauses,
    upgrades,
  });
  server = await startSubresourcesServer({ kubeConfig: cluster.admin, subresources });
  await registerSubresourcesApiService(cluster.admin, { port: server.port, caBundlePem: server.caBundlePem });
}, 900_000);

afterAll(async () => {
  pauses?.close();
  await server?.close();
  await cluster?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("subresources.kubevirt.io aggregated by a real kube-apiserver", () => {
  it("is Available in both of virt-api's versions, and discovery through kube-apiserver lists the subresources", async () => {
    const available = await kubectl(
      "get",
      "apiservices",
      "v1.subresources.kubevirt.io",
      "v1alpha3.subresources.kubevirt.io",
      "-o",
      'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Available")].status}{"\\n"}{end}',
    );
    expect(available.trim().split("\n")).toEqual([
      "v1.subresources.kubevirt.io=True",
      "v1alpha3.subresources.kubevirt.io=True",
    ]);
    const list = JSON.parse(await kubectl("get", "--raw", "/apis/subresources.kubevirt.io/v1")) as {
      resources: { name: string }[];
    };
    expect(list.resources.map((resource) => resource.name)).toEqual(
      expect.arrayContaining(["virtualmachineinstances/console", "virtualmachineinstances/pause"]),
    );
    // As on a cluster with KubeVirt, kubectl lists nothing of the group (no verbs, all subresources),
    // but its discovery of every group succeeds: an unreachable aggregated API would fail it.
    await expect(kubectl("api-resources", "--api-group=subresources.kubevirt.io")).resolves.toContain("NAME");
  });

  it("lets the BFF's service account through to the emulator's handler: a missing VMI's pause is its 404", async () => {
    const answer = await new RemoteApi(cluster.bff).request("PUT", pausePath, {});
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ kind: "Status", reason: "NotFound", details: { name: "missing" } });
  });

  it("upgrades the BFF's console websocket through kube-apiserver to the emulator's console handler", async () => {
    const options: https.RequestOptions = {};
    await cluster.bff.applyToHTTPSOptions(options);
    const server = cluster.bff.getCurrentCluster()?.server.replace(/^https/, "wss");
    const socket = new WebSocket(
      `${server}/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/missing/console`,
      { ca: options.ca, headers: options.headers as Record<string, string> },
    );
    const refusal = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      socket.on("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      socket.on("open", () => reject(new Error("a console opened for a VMI that does not exist")));
      socket.on("error", reject);
    });
    expect(refusal.status).toBe(404);
    expect(JSON.parse(refusal.body)).toMatchObject({ kind: "Status", reason: "NotFound" });
  });

  it("is refused by kube-apiserver's own RBAC for an account without the subresource, before the proxy", async () => {
    const nobody = await accountWithoutRights();
    const answer = await new RemoteApi(nobody).request("PUT", pausePath, {});
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ kind: "Status", reason: "Forbidden" });
  });

  it("asks the real API server with a SubjectAccessReview for the user the front proxy names", async () => {
    const asUser = (user: string, groups: string[]) => ({
      frontProxy: true,
      headers: { "X-Remote-User": user, "X-Remote-Group": groups.join(",") },
    });
    const bffUser = "system:serviceaccount:lab-console:lab-console";
    const allowed = await callDirectly("PUT", pausePath, asUser(bffUser, ["system:serviceaccounts"]));
    expect(allowed.status).toBe(404);
    const denied = await callDirectly(
      "PUT",
      pausePath,
      asUser("system:serviceaccount:lab-sessions:nobody", ["system:authenticated"]),
    );
    // virt-api answers a denial with 401 and the reviewer's reason as text, not a 403 Status.
    expect(denied.status).toBe(401);
    const noCertificate = await callDirectly("PUT", pausePath, { ...asUser(bffUser, []), frontProxy: false });
    expect(noCertificate).toEqual({ status: 401, text: "request is not authenticated" });
    const discovery = await callDirectly("GET", "/apis/subresources.kubevirt.io/v1", { frontProxy: false });
    expect(discovery.status).toBe(200);
  });
});
