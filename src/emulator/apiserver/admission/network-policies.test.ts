// networking.k8s.io/v1 NetworkPolicies through @kubernetes/client-node and kubectl: discovery, the API
// server's defaults and validation, patch, delete, `kubectl get netpol` and applying deploy/base's own
// policies. The emulator stores them and enforces nothing (its guests have loopback only).
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { NetworkingV1Api, type V1NetworkPolicy } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { jsonRequest } from "../../testing/raw-request.ts";
import { deployBaseDir, startTestEmulator, type TestEmulator } from "../../testing/start.ts";

const run = promisify(execFile);
const namespace = "lab-sessions";
let cluster: TestEmulator;
let networking: NetworkingV1Api;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(
    "kubectl",
    [
      "--kubeconfig",
      cluster.emulator.kubeconfigPath,
      "--cache-dir",
      join(cluster.dir, "kube-cache"),
      ...args,
    ],
    { timeout: 20_000 },
  );
  return stdout;
}

function policy(name: string, spec: V1NetworkPolicy["spec"]): V1NetworkPolicy {
  return { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name, namespace }, spec };
}

/** The API server's answer to creating `spec`, as status and message. */
async function createAnswer(spec: unknown): Promise<{ status: number; message: string }> {
  const answer = await jsonRequest(
    cluster.emulator,
    "POST",
    `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`,
    { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name: "bad" }, spec },
  );
  return { status: answer.status, message: (answer.json as { message?: string }).message ?? "" };
}

beforeAll(async () => {
  cluster = await startTestEmulator();
  networking = cluster.kubeConfig.makeApiClient(NetworkingV1Api);
});

afterAll(async () => {
  await cluster.close();
});

describe("NetworkPolicies", () => {
  it("are discoverable in networking.k8s.io/v1 as netpol", async () => {
    const groups = (await jsonRequest(cluster.emulator, "GET", "/apis")).json as {
      groups: { name: string }[];
    };
    expect(groups.groups.map((group) => group.name)).toContain("networking.k8s.io");
    const list = (await jsonRequest(cluster.emulator, "GET", "/apis/networking.k8s.io/v1")).json as {
      resources: unknown[];
    };
    expect(list.resources).toEqual([
      {
        name: "networkpolicies",
        singularName: "networkpolicy",
        namespaced: true,
        kind: "NetworkPolicy",
        verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
        shortNames: ["netpol"],
      },
    ]);
  });

  it("take the API server's defaults: policyTypes from the rules, TCP for a port without protocol", async () => {
    const created = await networking.createNamespacedNetworkPolicy({
      namespace,
      body: policy("defaults", {
        podSelector: { matchLabels: { app: "web" } },
        egress: [{ to: [{ ipBlock: { cidr: "203.0.113.0/24" } }], ports: [{ port: 443 }] }],
      }),
    });
    expect(created.spec?.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(created.spec?.egress?.[0]?.ports).toEqual([{ protocol: "TCP", port: 443 }]);
    const ingressOnly = await networking.createNamespacedNetworkPolicy({
      namespace,
      body: policy("ingress-only", { podSelector: {} }),
    });
    expect(ingressOnly.spec?.policyTypes).toEqual(["Ingress"]);
  });

  it.each([
    [
      "a CIDR that is none",
      { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: "mirror.example.edu" } }] }] },
      'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "mirror.example.edu": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ],
    [
      "an except outside the CIDR",
      {
        podSelector: {},
        egress: [{ to: [{ ipBlock: { cidr: "203.0.113.0/24", except: ["10.0.0.0/8"] } }] }],
      },
      'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
    ],
    [
      "ipBlock beside a selector",
      { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/8" }, podSelector: {} }] }] },
      "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer",
    ],
    [
      "an empty peer",
      { podSelector: {}, ingress: [{ from: [{}] }] },
      "spec.ingress[0].from[0]: Required value: must specify a peer",
    ],
    [
      "a port out of range",
      { podSelector: {}, egress: [{ ports: [{ port: 70000 }] }] },
      "spec.egress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ],
    [
      "an endPort below port",
      { podSelector: {}, egress: [{ ports: [{ port: 8000, endPort: 7000 }] }] },
      "spec.egress[0].ports[0].endPort: Invalid value: 8000: must be greater than or equal to `port`",
    ],
    [
      "ICMP",
      { podSelector: {}, egress: [{ ports: [{ protocol: "ICMP", port: 1 }] }] },
      'spec.egress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
    ],
    [
      "an unknown policy type",
      { podSelector: {}, policyTypes: ["Inbound"] },
      'spec.policyTypes[0]: Unsupported value: "Inbound": supported values: "Ingress", "Egress"',
    ],
  ])("refuse %s with the API server's message", async (_what, spec, message) => {
    expect(await createAnswer(spec)).toEqual({
      status: 422,
      message: `NetworkPolicy.networking.k8s.io "bad" is invalid: ${message}`,
    });
  });

  it("take a JSON patch of the whole spec, list by label and delete", async () => {
    await networking.createNamespacedNetworkPolicy({
      namespace,
      body: {
        ...policy("patched", { podSelector: {}, policyTypes: ["Egress"], egress: [] }),
        metadata: { name: "patched", namespace, labels: { owner: "test" } },
      },
    });
    const spec = {
      podSelector: { matchLabels: { lab: "x" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "198.51.100.0/24" } }], ports: [{ protocol: "UDP", port: 53 }] }],
    };
    const patched = await networking.patchNamespacedNetworkPolicy({
      name: "patched",
      namespace,
      body: [{ op: "replace", path: "/spec", value: spec }],
    });
    expect(patched.spec).toEqual(spec);
    const listed = await networking.listNamespacedNetworkPolicy({ namespace, labelSelector: "owner=test" });
    expect(listed.items.map((item) => item.metadata?.name)).toEqual(["patched"]);
    await networking.deleteNamespacedNetworkPolicy({ name: "patched", namespace });
    const after = await networking.listNamespacedNetworkPolicy({ namespace, labelSelector: "owner=test" });
    expect(after.items).toEqual([]);
  });

  it("apply from deploy/base with kubectl, and show the pod selector in kubectl get", async () => {
    const rendered = (await run("kubectl", ["kustomize", deployBaseDir], { timeout: 20_000 })).stdout;
    // The emulator serves no Deployments or Services: only the policies go in.
    const policies = parseAllDocuments(rendered).filter(
      (document) => document.get("kind") === "NetworkPolicy",
    );
    expect(policies).toHaveLength(6);
    const manifests = join(cluster.dir, "base-policies.yaml");
    writeFileSync(manifests, policies.map((document) => document.toString()).join("---\n"));
    const applied = await kubectl("apply", "-f", manifests);
    expect(applied).toContain("networkpolicy.networking.k8s.io/lab-console-vms-deny-egress created");
    expect(applied).toContain("networkpolicy.networking.k8s.io/lab-console-from-ingress created");
    const again = await kubectl("apply", "-f", manifests);
    expect(again).toContain("networkpolicy.networking.k8s.io/lab-console-vms-dns unchanged");
    const table = await kubectl("get", "netpol", "-n", namespace);
    const lines = table.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+POD-SELECTOR\s+AGE$/);
    expect(table).toMatch(/lab-console-vms\s+kubevirt\.io=virt-launcher\s+\d+s/);
    expect(table).toMatch(/lab-console-vms-deny-egress\s+<none>\s+\d+s/);
  });
});
