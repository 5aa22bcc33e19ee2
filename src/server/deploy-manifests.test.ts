// The manifests as `kubectl kustomize` renders them (deploy/base, the demo overlay, the replicas
// component, and the overlay patches docs/deploy.md shows), read by the BFF's own config parser and
// by a NetworkPolicy evaluator on a model cluster: who may reach whom (security review M4, M5).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ConfigError, loadConfig } from "./config.ts";
import { buildLabNetworkPolicy } from "./sessions/lab-network-policy.ts";
import { aLab } from "./sessions/testing/fixtures.ts";
import { buildSessionObjects } from "./sessions/vm-manifest.ts";
import {
  createNetwork,
  type AddressEndpoint,
  type NamespaceInfo,
  type NetworkPolicyObject,
  type PodEndpoint,
  type Protocol,
} from "./testing/network-policy-evaluator.ts";

const run = promisify(execFile);
const repository = fileURLToPath(new URL("../../", import.meta.url));
const deploy = path.join(repository, "deploy");

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
}

interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { name?: string; containerPort: number; protocol?: Protocol }[];
}

interface DeploymentSpec {
  template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } };
}

async function render(dir: string): Promise<Rendered[]> {
  const { stdout } = await run("kubectl", ["kustomize", dir], { timeout: 30_000 });
  return parseAllDocuments(stdout).map((document) => document.toJS() as Rendered);
}

let scratch: string;
/**
 * An overlay in a scratch folder, as an operator would write one; `{deploy}` in the text stands for
 * this repository's deploy/ (kustomize takes only relative paths to bases and components).
 */
async function renderOverlay(name: string, kustomization: string): Promise<Rendered[]> {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "kustomization.yaml"),
    kustomization.replaceAll("{deploy}", path.relative(dir, deploy)),
  );
  return render(dir);
}

function deploymentOf(objects: Rendered[]): DeploymentSpec {
  const deployment = objects.find((object) => object.kind === "Deployment");
  if (!deployment) throw new Error("no Deployment rendered");
  return deployment.spec as DeploymentSpec;
}

function bffContainer(objects: Rendered[]): Container {
  const container = deploymentOf(objects).template.spec.containers.find((c) => c.name === "lab-console");
  if (!container) throw new Error("no lab-console container");
  return container;
}

/** The plain values of the BFF's environment, as the pod would see them (Secrets left out). */
function plainEnv(objects: Rendered[]): Record<string, string> {
  return Object.fromEntries(
    (bffContainer(objects).env ?? []).flatMap((entry) =>
      entry.value === undefined ? [] : [[entry.name, entry.value]],
    ),
  );
}

function policiesOf(objects: Rendered[]): NetworkPolicyObject[] {
  return objects.filter((object) => object.kind === "NetworkPolicy") as unknown as NetworkPolicyObject[];
}

let base: Rendered[];
let demo: Rendered[];

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), "deploy-manifests-"));
  [base, demo] = await Promise.all([
    render(path.join(deploy, "base")),
    render(path.join(deploy, "overlays/demo")),
  ]);
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the image the manifests run", () => {
  it("is the one the Containerfile builds, at the version of package.json, run as the uid it expects", () => {
    const { version } = JSON.parse(readFileSync(path.join(repository, "package.json"), "utf8")) as {
      version: string;
    };
    const containerfile = readFileSync(path.join(repository, "Containerfile"), "utf8");
    expect(containerfile).toContain(`ARG VERSION=${version}\n`);
    expect(containerfile).toContain(`podman build -t ghcr.io/lab-console/lab-console:${version} `);
    expect(containerfile).toMatch(/^USER 1000:1000$/m);
    expect(bffContainer(base).image).toBe(`ghcr.io/lab-console/lab-console:${version}`);
    const pod = deploymentOf(base).template.spec as { securityContext?: { runAsUser?: number } };
    expect(pod.securityContext?.runAsUser).toBe(1000);
  });
});

describe("sign-in mode in the manifests (M5)", () => {
  it("leaves AUTH_MODE out of deploy/base, so a pod from it refuses to start and says what to do", () => {
    const env = bffContainer(base).env ?? [];
    expect(env.map((entry) => entry.name)).not.toContain("AUTH_MODE");
    expect(() => loadConfig({ env: plainEnv(base), inCluster: true })).toThrow(ConfigError);
    try {
      loadConfig({ env: plainEnv(base), inCluster: true });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        expect.stringMatching(
          /^AUTH_MODE: must be set .*deploy\/overlays\/demo sets 'demo' \(docs\/deploy\.md\)$/,
        ),
      ]);
    }
  });

  it("sets demo sign-in only in deploy/overlays/demo, which changes nothing else", () => {
    expect(plainEnv(demo).AUTH_MODE).toBe("demo");
    expect(loadConfig({ env: plainEnv(demo), inCluster: true }).authMode).toBe("demo");
    const withoutAuthMode = (objects: Rendered[]) => {
      const copy = structuredClone(objects);
      const container = bffContainer(copy);
      container.env = container.env?.filter((entry) => entry.name !== "AUTH_MODE");
      return copy;
    };
    expect(withoutAuthMode(demo)).toEqual(base);
  });
});

// The model cluster: one student VM of a lab with egress and one of a lab without, the BFF, and the
// things a VM must not reach. Pod labels are those the real parts set: the BFF's from the rendered
// Deployment, the VMs' from the BFF's own VM template plus what KubeVirt adds to the launcher pod.
const namespaceNames = [
  "lab-sessions",
  "lab-console",
  "kube-system",
  "kubevirt",
  "ingress-nginx",
  "monitoring",
  "default",
  "traefik",
];
const namespaces: NamespaceInfo[] = namespaceNames.map((name) => ({
  name,
  labels: { "kubernetes.io/metadata.name": name },
}));

const mirrorLab = aLab({
  id: "mirrors",
  network: {
    egress: [
      { cidr: "203.0.113.0/24", except: ["203.0.113.128/25"], protocol: "TCP", ports: [80, 443] },
      { cidr: "198.51.100.53/32", except: [], protocol: "UDP", ports: [53] },
    ],
  },
});
const plainLab = aLab({ id: "plain" });

function vmPod(lab: typeof plainLab, owner: string, ip: string, node: string): PodEndpoint {
  const { virtualMachine } = buildSessionObjects({
    sessionId: `${lab.id}-abcdefgh`,
    lab,
    owner,
    namespace: "lab-sessions",
    expiresAt: new Date("2026-01-01T00:00:00Z"),
  });
  const templateLabels = virtualMachine.spec.template.metadata?.labels ?? {};
  return {
    kind: "pod",
    namespace: "lab-sessions",
    labels: {
      ...templateLabels,
      "kubevirt.io": "virt-launcher",
      "kubevirt.io/created-by": "0b4d3c1e-0000-4000-8000-000000000001",
      "vm.kubevirt.io/name": `${lab.id}-abcdefgh`,
    },
    ip,
    node,
  };
}

function bffPod(objects: Rendered[], ip: string, node: string): PodEndpoint {
  const deployment = deploymentOf(objects);
  const ports = Object.fromEntries(
    (bffContainer(objects).ports ?? []).flatMap((port) =>
      port.name ? [[port.name, { port: port.containerPort, protocol: port.protocol ?? "TCP" }]] : [],
    ),
  );
  return {
    kind: "pod",
    namespace: "lab-console",
    labels: deployment.template.metadata.labels,
    ip,
    node,
    ports,
  };
}

const pod = (
  namespace: string,
  labels: Record<string, string>,
  ip: string,
  node = "node-2",
): PodEndpoint => ({
  kind: "pod",
  namespace,
  labels,
  ip,
  node,
});
const address = (ip: string, node?: string): AddressEndpoint => ({
  kind: "ip",
  ip,
  ...(node ? { node } : {}),
});

const studentVm = vmPod(mirrorLab, "alice", "10.244.1.10", "node-1");
const otherVm = vmPod(plainLab, "bob", "10.244.2.11", "node-2");
const kubeDns = pod("kube-system", { "k8s-app": "kube-dns" }, "10.244.0.5", "node-0");
const virtApi = pod("kubevirt", { "kubevirt.io": "virt-api" }, "10.244.0.6", "node-0");
const ingressController = pod("ingress-nginx", { "app.kubernetes.io/name": "ingress-nginx" }, "10.244.0.7");
const traefik = pod("traefik", { "app.kubernetes.io/name": "traefik" }, "10.244.0.9");
const prometheus = pod("monitoring", { "app.kubernetes.io/name": "prometheus" }, "10.244.0.8");
const someService = pod("default", { app: "web" }, "10.244.3.3");
const apiServerClusterIp = address("10.96.0.1");
const apiServerHost = address("192.168.0.10", "node-0");
const kubeletNode1 = address("192.168.0.11", "node-1");
const metadata = address("169.254.169.254");
const mirror = address("203.0.113.10");
const nodeLocalDns = address("169.254.20.10");

describe("NetworkPolicies of deploy/base, with the policy the BFF creates for a lab with egress (M4)", () => {
  let network: ReturnType<typeof createNetwork>;
  let bff: PodEndpoint;
  const labPolicy = () => {
    const policy = buildLabNetworkPolicy(mirrorLab, "lab-sessions");
    if (!policy) throw new Error("a lab with egress must get a policy");
    return policy as unknown as NetworkPolicyObject;
  };

  beforeAll(() => {
    bff = bffPod(base, "10.244.1.20", "node-1");
    network = createNetwork({ namespaces, policies: [...policiesOf(base), labPolicy()] });
  });

  it("keeps a student VM from the BFF, the API server, the metadata endpoint, nodes and cluster services", () => {
    for (const vm of [studentVm, otherVm]) {
      expect(network.allows(vm, bff, 8080), "the BFF pod").toBe(false);
      expect(network.allows(vm, apiServerClusterIp, 443), "the API server's ClusterIP").toBe(false);
      expect(network.allows(vm, apiServerHost, 6443), "the API server on its node").toBe(false);
      expect(network.allows(vm, metadata, 80), "the metadata endpoint").toBe(false);
      expect(network.allows(vm, kubeletNode1, 10250), "its node's kubelet").toBe(false);
      expect(network.allows(vm, someService, 80), "another namespace's service").toBe(false);
      expect(network.allows(vm, virtApi, 443), "virt-api").toBe(false);
      expect(network.allows(vm, kubeDns, 9153), "kube-dns's metrics").toBe(false);
    }
    expect(network.allows(studentVm, otherVm, 22), "another student's VM").toBe(false);
    expect(network.allows(otherVm, studentVm, 899), "another student's agent").toBe(false);
  });

  it("lets a student VM resolve names with kube-dns over UDP and TCP", () => {
    for (const vm of [studentVm, otherVm]) {
      expect(network.allows(vm, kubeDns, 53, "UDP")).toBe(true);
      expect(network.allows(vm, kubeDns, 53, "TCP")).toBe(true);
    }
  });

  it("admits virt-api to the grading agent's port 899 and nothing else to a VM", () => {
    expect(network.allows(virtApi, studentVm, 899)).toBe(true);
    expect(network.allows(virtApi, studentVm, 22)).toBe(false);
    expect(network.allows(bff, studentVm, 899)).toBe(false);
    expect(network.allows(ingressController, studentVm, 899)).toBe(false);
  });

  it("admits only the ingress controller's namespace and Prometheus to the BFF, on its port", () => {
    expect(network.allows(ingressController, bff, 8080)).toBe(true);
    expect(network.allows(prometheus, bff, 8080)).toBe(true);
    expect(network.allows(ingressController, bff, 9090)).toBe(false);
    expect(network.allows(someService, bff, 8080)).toBe(false);
    expect(network.allows(kubeDns, bff, 8080)).toBe(false);
    expect(network.allows(traefik, bff, 8080)).toBe(false);
    // The kubelet's probes come from the pod's own node, which NetworkPolicy always admits.
    expect(network.allows(kubeletNode1, bff, 8080)).toBe(true);
    // One replica alone: the base has no reason to let another BFF pod in.
    expect(network.allows(bffPod(base, "10.244.2.21", "node-2"), bff, 8080)).toBe(false);
  });

  it("leaves the BFF's own connections open: API server, OIDC issuer, PostgreSQL", () => {
    expect(network.allows(bff, apiServerHost, 6443)).toBe(true);
    expect(network.allows(bff, address("198.51.100.80"), 443)).toBe(true);
    expect(network.allows(bff, someService, 5432)).toBe(true);
  });

  it("opens exactly a lab's declared ranges and ports, to that lab's VMs only", () => {
    expect(network.allows(studentVm, mirror, 443)).toBe(true);
    expect(network.allows(studentVm, mirror, 80)).toBe(true);
    expect(network.allows(studentVm, mirror, 22)).toBe(false);
    expect(network.allows(studentVm, mirror, 443, "UDP")).toBe(false);
    expect(network.allows(studentVm, address("203.0.113.200"), 443), "except").toBe(false);
    expect(network.allows(studentVm, address("203.0.114.10"), 443)).toBe(false);
    expect(network.allows(studentVm, address("198.51.100.53"), 53, "UDP")).toBe(true);
    expect(network.allows(studentVm, address("198.51.100.53"), 53, "TCP")).toBe(false);
    expect(network.allows(otherVm, mirror, 443), "a VM of a lab without egress").toBe(false);
  });
});

describe("the knobs docs/deploy.md shows", () => {
  it("lets replicas of deploy/components/replicas reach each other on the BFF's port", async () => {
    const replicas = await renderOverlay(
      "replicas",
      "resources: [{deploy}/base]\ncomponents: [{deploy}/components/replicas]\n",
    );
    const network = createNetwork({ namespaces, policies: policiesOf(replicas) });
    const [one, two] = [bffPod(replicas, "10.244.1.20", "node-1"), bffPod(replicas, "10.244.2.21", "node-2")];
    expect(network.allows(two, one, 8080)).toBe(true);
    expect(network.allows(two, one, 9090)).toBe(false);
    expect(network.allows(studentVm, one, 8080)).toBe(false);
    expect(network.allows(someService, one, 8080)).toBe(false);
  });

  it("moves the ingress and Prometheus namespaces with two patches", async () => {
    const moved = await renderOverlay(
      "namespaces",
      [
        "resources: [{deploy}/base]",
        "patches:",
        "  - target: { kind: NetworkPolicy, name: lab-console-from-ingress }",
        "    patch: |-",
        "      - op: replace",
        "        path: /spec/ingress/0/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name",
        "        value: traefik",
        "  - target: { kind: NetworkPolicy, name: lab-console-from-prometheus }",
        "    patch: |-",
        "      - op: replace",
        "        path: /spec/ingress/0/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name",
        "        value: default",
        "",
      ].join("\n"),
    );
    const network = createNetwork({ namespaces, policies: policiesOf(moved) });
    const bff = bffPod(moved, "10.244.1.20", "node-1");
    expect(network.allows(traefik, bff, 8080)).toBe(true);
    expect(network.allows(someService, bff, 8080)).toBe(true);
    expect(network.allows(ingressController, bff, 8080)).toBe(false);
    expect(network.allows(prometheus, bff, 8080)).toBe(false);
  });

  it("adds NodeLocal DNSCache's address to the VMs' DNS without opening the metadata endpoint", async () => {
    const nodeLocal = await renderOverlay(
      "node-local-dns",
      [
        "resources: [{deploy}/base]",
        "patches:",
        "  - target: { kind: NetworkPolicy, name: lab-console-vms-dns }",
        "    patch: |-",
        "      - op: add",
        "        path: /spec/egress/0/to/-",
        "        value: { ipBlock: { cidr: 169.254.20.10/32 } }",
        "",
      ].join("\n"),
    );
    const network = createNetwork({ namespaces, policies: policiesOf(nodeLocal) });
    expect(network.allows(studentVm, nodeLocalDns, 53, "UDP")).toBe(true);
    expect(network.allows(studentVm, nodeLocalDns, 80)).toBe(false);
    expect(network.allows(studentVm, metadata, 53, "UDP")).toBe(false);
    expect(network.allows(studentVm, kubeDns, 53, "UDP")).toBe(true);
  });
});
