// Decides whether a connection is allowed by a set of networking.k8s.io/v1 NetworkPolicies, for tests
// of the rendered manifests and of the policies the BFF creates. It follows the API's documented
// semantics (the Network Policies concept page and the NetworkPolicySpec/NetworkPolicyPeer/
// NetworkPolicyPort API reference, kubernetes.io), not any one plugin:
//
// - A pod is isolated for a direction (ingress, egress) when at least one policy in its namespace
//   selects it with spec.podSelector and lists that direction in spec.policyTypes. A pod no policy
//   isolates for a direction allows everything in it.
// - policyTypes left out defaults to ["Ingress"], plus "Egress" when spec.egress has rules (the API
//   server's SetDefaults_NetworkPolicy); a port's protocol left out defaults to TCP.
// - Policies add up: a connection from an isolated pod is allowed when any rule of any policy that
//   isolates it allows it. Nothing can deny what another policy allows; there is no order.
// - A connection needs both ends: the source's egress and the destination's ingress. What is not a
//   pod (a node, an address outside the cluster) has no policies and allows everything itself.
// - A rule's `to`/`from` left out or empty matches every peer; its `ports` left out or empty match
//   every port. An empty rule list (`egress: []`) matches nothing.
// - One peer with namespaceSelector and podSelector matches pods that both select (AND); separate
//   peers match when any does (OR). podSelector alone means pods in the policy's own namespace;
//   namespaceSelector alone, every pod of the namespaces it selects. Selectors never match
//   anything that is not a pod.
// - ipBlock matches the address: cidr minus every except. Whether it also matches pod addresses is
//   left to the plugin by the docs ("should be cluster-external IPs"); this evaluator lets it match
//   them, as Calico does, which is the wider reading and so the one a "cannot reach" test must pass.
// - A port matches the protocol and either the port number, the range port..endPort, or, for a name,
//   the destination pod's container port of that name. A port entry without port matches every
//   port of its protocol.
// - "Pods cannot block access from their resident node" (the concept page): a connection from the
//   destination pod's own node is always admitted. The other direction, a pod to its node, is
//   plugin-defined; this evaluator treats the node as any other address.
// Services are not modelled: plugins evaluate after the Service's DNAT (the docs leave it open), so
// tests name the endpoint behind a Service, and its ClusterIP as a plain address too.
import { ipInCidr, parseCidr, type Cidr } from "../../common/cidr.ts";

export type Protocol = "TCP" | "UDP" | "SCTP";

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
  }[];
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface NetworkPolicyPort {
  protocol?: Protocol;
  port?: number | string;
  endPort?: number;
}

export interface NetworkPolicyObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: ("Ingress" | "Egress")[];
    ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
    egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
  };
}

export interface NamespaceInfo {
  name: string;
  /** The API server sets kubernetes.io/metadata.name on every namespace; include it. */
  labels: Record<string, string>;
}

export interface PodEndpoint {
  kind: "pod";
  namespace: string;
  labels: Record<string, string>;
  ip: string;
  node: string;
  /** Named container ports, which a policy's named ports refer to. */
  ports?: Record<string, { port: number; protocol: Protocol }>;
}

/** Anything that is not a pod: a node (give its name), a host outside the cluster, a ClusterIP. */
export interface AddressEndpoint {
  kind: "ip";
  ip: string;
  node?: string;
}

export type Endpoint = PodEndpoint | AddressEndpoint;

export interface Network {
  /** Whether `from` may open a connection to `to` on `port`/`protocol` (TCP by default). */
  allows(from: Endpoint, to: Endpoint, port: number, protocol?: Protocol): boolean;
}

type Direction = "Ingress" | "Egress";

interface CompiledPeer {
  matches(endpoint: Endpoint, policyNamespace: string): boolean;
}

interface CompiledRule {
  peers: CompiledPeer[] | "all";
  ports: NetworkPolicyPort[] | "all";
}

interface CompiledPolicy {
  name: string;
  namespace: string;
  selects(pod: PodEndpoint): boolean;
  rules: Record<Direction, CompiledRule[] | undefined>;
}

export function createNetwork(input: {
  namespaces: NamespaceInfo[];
  policies: NetworkPolicyObject[];
}): Network {
  const namespaceLabels = new Map(input.namespaces.map((namespace) => [namespace.name, namespace.labels]));
  const labelsOfNamespace = (name: string) => {
    const labels = namespaceLabels.get(name);
    if (!labels) throw new Error(`namespace ${name} is not in the model`);
    return labels;
  };

  const policies = input.policies.map((policy) => compile(policy, labelsOfNamespace));

  function isolating(pod: PodEndpoint, direction: Direction): CompiledPolicy[] {
    return policies.filter(
      (policy) =>
        policy.namespace === pod.namespace && policy.rules[direction] !== undefined && policy.selects(pod),
    );
  }

  function allowedAt(
    pod: PodEndpoint,
    direction: Direction,
    peer: Endpoint,
    port: number,
    protocol: Protocol,
  ): boolean {
    const applying = isolating(pod, direction);
    if (applying.length === 0) return true;
    // Named ports name the destination's container port: the peer's for egress, the pod's for ingress.
    const destination = direction === "Egress" ? peer : pod;
    return applying.some((policy) =>
      (policy.rules[direction] ?? []).some(
        (rule) =>
          (rule.peers === "all" ||
            rule.peers.some((candidate) => candidate.matches(peer, policy.namespace))) &&
          (rule.ports === "all" ||
            rule.ports.some((entry) => portMatches(entry, destination, port, protocol))),
      ),
    );
  }

  return {
    allows(from, to, port, protocol = "TCP") {
      if (from.kind === "pod") labelsOfNamespace(from.namespace);
      if (to.kind === "pod") labelsOfNamespace(to.namespace);
      const leaves = from.kind !== "pod" || allowedAt(from, "Egress", to, port, protocol);
      const ownNode =
        to.kind === "pod" && from.kind === "ip" && from.node !== undefined && from.node === to.node;
      const arrives = to.kind !== "pod" || ownNode || allowedAt(to, "Ingress", from, port, protocol);
      return leaves && arrives;
    },
  };
}

function compile(
  policy: NetworkPolicyObject,
  labelsOfNamespace: (name: string) => Record<string, string>,
): CompiledPolicy {
  const namespace = policy.metadata.namespace ?? "default";
  const { spec } = policy;
  const types = spec.policyTypes?.length
    ? spec.policyTypes
    : (["Ingress", ...(spec.egress?.length ? ["Egress" as const] : [])] as Direction[]);
  const where = `${namespace}/${policy.metadata.name}`;
  const compileRules = (
    rules: { peers: NetworkPolicyPeer[] | undefined; ports: NetworkPolicyPort[] | undefined }[],
  ): CompiledRule[] =>
    rules.map((rule) => ({
      peers: rule.peers?.length
        ? rule.peers.map((peer) => compilePeer(peer, where, labelsOfNamespace))
        : "all",
      ports: rule.ports?.length ? rule.ports : "all",
    }));
  return {
    name: policy.metadata.name,
    namespace,
    selects: (pod) => selectorMatches(spec.podSelector, pod.labels),
    rules: {
      Ingress: types.includes("Ingress")
        ? compileRules((spec.ingress ?? []).map((rule) => ({ peers: rule.from, ports: rule.ports })))
        : undefined,
      Egress: types.includes("Egress")
        ? compileRules((spec.egress ?? []).map((rule) => ({ peers: rule.to, ports: rule.ports })))
        : undefined,
    },
  };
}

function compilePeer(
  peer: NetworkPolicyPeer,
  where: string,
  labelsOfNamespace: (name: string) => Record<string, string>,
): CompiledPeer {
  if (peer.ipBlock) {
    if (peer.podSelector || peer.namespaceSelector) {
      throw new Error(`${where}: a peer with ipBlock may not have podSelector or namespaceSelector`);
    }
    const cidr = mustParse(peer.ipBlock.cidr, where);
    const except = (peer.ipBlock.except ?? []).map((text) => mustParse(text, where));
    return {
      matches: (endpoint) =>
        ipInCidr(endpoint.ip, cidr) && !except.some((excepted) => ipInCidr(endpoint.ip, excepted)),
    };
  }
  const { podSelector, namespaceSelector } = peer;
  if (!podSelector && !namespaceSelector) throw new Error(`${where}: a peer needs a selector or an ipBlock`);
  return {
    matches(endpoint, policyNamespace) {
      if (endpoint.kind !== "pod") return false;
      const inNamespace = namespaceSelector
        ? selectorMatches(namespaceSelector, labelsOfNamespace(endpoint.namespace))
        : endpoint.namespace === policyNamespace;
      return inNamespace && (podSelector === undefined || selectorMatches(podSelector, endpoint.labels));
    },
  };
}

function mustParse(text: string, where: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed.ok) throw new Error(`${where}: ${text} is not a CIDR`);
  return parsed.cidr;
}

/** Label selector semantics: every matchLabels pair and every expression must hold; {} selects all. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const pairs = Object.entries(selector.matchLabels ?? {});
  if (!pairs.every(([key, value]) => labels[key] === value)) return false;
  return (selector.matchExpressions ?? []).every((expression) => {
    const has = Object.hasOwn(labels, expression.key);
    const values = expression.values ?? [];
    switch (expression.operator) {
      case "In":
        return has && values.includes(labels[expression.key] ?? "");
      case "NotIn":
        return !has || !values.includes(labels[expression.key] ?? "");
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
    }
    throw new Error(`unknown selector operator ${String(expression.operator)}`);
  });
}

function portMatches(
  entry: NetworkPolicyPort,
  destination: Endpoint,
  port: number,
  protocol: Protocol,
): boolean {
  if ((entry.protocol ?? "TCP") !== protocol) return false;
  if (entry.port === undefined) return true;
  if (typeof entry.port === "string") {
    const named = destination.kind === "pod" ? destination.ports?.[entry.port] : undefined;
    return named !== undefined && named.protocol === protocol && named.port === port;
  }
  return entry.endPort === undefined ? entry.port === port : port >= entry.port && port <= entry.endPort;
}
