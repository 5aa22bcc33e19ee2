// The evaluator against the rules of the NetworkPolicy API, one rule per case, on hand-written
// policies: if it got one of them wrong, the deploy tests that use it would prove nothing.
import { describe, expect, it } from "vitest";
import {
  createNetwork,
  type NamespaceInfo,
  type NetworkPolicyObject,
  type PodEndpoint,
} from "./network-policy-evaluator.ts";

const namespaces: NamespaceInfo[] = ["a", "b", "c"].map((name) => ({
  name,
  labels: { "kubernetes.io/metadata.name": name, ...(name === "b" ? { team: "blue" } : {}) },
}));

function pod(namespace: string, ip: string, labels: Record<string, string>, node = "node-1"): PodEndpoint {
  return { kind: "pod", namespace, ip, labels, node, ports: { http: { port: 8080, protocol: "TCP" } } };
}

const web = pod("a", "10.244.1.10", { app: "web" });
const db = pod("a", "10.244.1.11", { app: "db" });
const blue = pod("b", "10.244.2.10", { app: "web" });
const other = pod("c", "10.244.3.10", { app: "web" });
const outside = { kind: "ip", ip: "203.0.113.10" } as const;

function policy(namespace: string, name: string, spec: NetworkPolicyObject["spec"]): NetworkPolicyObject {
  return { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name, namespace }, spec };
}

describe("the NetworkPolicy evaluator", () => {
  it("allows everything while no policy selects a pod (pods are non-isolated by default)", () => {
    const network = createNetwork({ namespaces, policies: [] });
    expect(network.allows(web, db, 5432)).toBe(true);
    expect(network.allows(other, web, 8080, "UDP")).toBe(true);
    expect(network.allows(web, outside, 443)).toBe(true);
  });

  it("isolates a pod only in the directions of its policies' policyTypes", () => {
    const ingressOnly = policy("a", "deny-in", {
      podSelector: { matchLabels: { app: "db" } },
      policyTypes: ["Ingress"],
    });
    const network = createNetwork({ namespaces, policies: [ingressOnly] });
    expect(network.allows(web, db, 5432)).toBe(false);
    expect(network.allows(db, web, 8080)).toBe(true);
    expect(network.allows(db, outside, 443)).toBe(true);
  });

  it("defaults policyTypes as the API server does: Ingress, and Egress when egress rules are given", () => {
    const noTypes = policy("a", "implicit", {
      podSelector: { matchLabels: { app: "db" } },
      egress: [{ to: [{ ipBlock: { cidr: "203.0.113.0/24" } }] }],
    });
    const network = createNetwork({ namespaces, policies: [noTypes] });
    expect(network.allows(web, db, 5432)).toBe(false);
    expect(network.allows(db, outside, 443)).toBe(true);
    expect(network.allows(db, web, 8080)).toBe(false);
    const emptyNoTypes = createNetwork({ namespaces, policies: [policy("a", "p", { podSelector: {} })] });
    expect(emptyNoTypes.allows(web, outside, 443)).toBe(true);
    expect(emptyNoTypes.allows(db, web, 8080)).toBe(false);
  });

  it("adds policies up: a deny-all cannot take away what another policy allows", () => {
    const denyAll = policy("a", "deny", { podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    const allowWeb = policy("a", "web-in", {
      podSelector: { matchLabels: { app: "web" } },
      policyTypes: ["Ingress"],
      ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 8080 }] }],
    });
    const network = createNetwork({ namespaces, policies: [denyAll, allowWeb] });
    expect(network.allows(other, web, 8080)).toBe(true);
    expect(network.allows(other, web, 8081)).toBe(false);
    expect(network.allows(other, db, 8080)).toBe(false);
    // Both ends must agree: a's egress is closed, whatever b's ingress says.
    expect(network.allows(web, blue, 8080)).toBe(false);
  });

  it("matches an empty rule list as nothing, and a rule without to or ports as everything", () => {
    const none = createNetwork({
      namespaces,
      policies: [policy("a", "p", { podSelector: {}, policyTypes: ["Egress"], egress: [] })],
    });
    expect(none.allows(web, outside, 443)).toBe(false);
    const all = createNetwork({
      namespaces,
      policies: [policy("a", "p", { podSelector: {}, policyTypes: ["Egress"], egress: [{}] })],
    });
    expect(all.allows(web, outside, 443, "UDP")).toBe(true);
    expect(all.allows(web, other, 1)).toBe(true);
  });

  it("reads ipBlock with except, by address family", () => {
    const network = createNetwork({
      namespaces,
      policies: [
        policy("a", "p", {
          podSelector: {},
          policyTypes: ["Egress"],
          egress: [{ to: [{ ipBlock: { cidr: "203.0.113.0/24", except: ["203.0.113.128/25"] } }] }],
        }),
      ],
    });
    expect(network.allows(web, outside, 443)).toBe(true);
    expect(network.allows(web, { kind: "ip", ip: "203.0.113.200" }, 443)).toBe(false);
    expect(network.allows(web, { kind: "ip", ip: "203.0.114.1" }, 443)).toBe(false);
    expect(network.allows(web, { kind: "ip", ip: "2001:db8::1" }, 443)).toBe(false);
  });

  it("matches ports by protocol (TCP when left out), port ranges with endPort and named ports", () => {
    const network = createNetwork({
      namespaces,
      policies: [
        policy("a", "p", {
          podSelector: { matchLabels: { app: "web" } },
          policyTypes: ["Egress"],
          egress: [
            { ports: [{ port: 443 }, { protocol: "UDP", port: 53 }, { port: 8000, endPort: 8010 }] },
            { to: [{ podSelector: {} }], ports: [{ port: "http" }] },
            { to: [{ ipBlock: { cidr: "198.51.100.0/24" } }], ports: [{ protocol: "UDP" }] },
          ],
        }),
      ],
    });
    expect(network.allows(web, outside, 443)).toBe(true);
    expect(network.allows(web, outside, 443, "UDP")).toBe(false);
    expect(network.allows(web, outside, 53, "UDP")).toBe(true);
    expect(network.allows(web, outside, 53)).toBe(false);
    expect(network.allows(web, outside, 8010)).toBe(true);
    expect(network.allows(web, outside, 8011)).toBe(false);
    // A named port is the destination pod's container port of that name.
    expect(network.allows(web, db, 8080)).toBe(true);
    expect(network.allows(web, db, 8081)).toBe(false);
    expect(network.allows(web, { kind: "ip", ip: "198.51.100.7" }, 12345, "UDP")).toBe(true);
    expect(network.allows(web, { kind: "ip", ip: "198.51.100.7" }, 12345)).toBe(false);
  });

  it("ANDs namespaceSelector and podSelector in one peer, ORs separate peers, and keeps podSelector alone local", () => {
    const to = (peers: object[]) =>
      createNetwork({
        namespaces,
        policies: [
          policy("a", "p", {
            podSelector: { matchLabels: { app: "web" } },
            policyTypes: ["Egress"],
            egress: [{ to: peers as never }],
          }),
        ],
      });
    const and = to([
      { namespaceSelector: { matchLabels: { team: "blue" } }, podSelector: { matchLabels: { app: "db" } } },
    ]);
    expect(and.allows(web, blue, 80)).toBe(false);
    const or = to([
      { namespaceSelector: { matchLabels: { team: "blue" } } },
      { podSelector: { matchLabels: { app: "db" } } },
    ]);
    expect(or.allows(web, blue, 80)).toBe(true);
    expect(or.allows(web, db, 80)).toBe(true);
    expect(or.allows(web, other, 80)).toBe(false);
    const local = to([{ podSelector: { matchLabels: { app: "web" } } }]);
    expect(local.allows(web, pod("a", "10.244.1.12", { app: "web" }), 80)).toBe(true);
    expect(local.allows(web, blue, 80)).toBe(false);
    // Selectors never match what is not a pod.
    expect(to([{ namespaceSelector: {} }]).allows(web, outside, 80)).toBe(false);
  });

  it("reads matchExpressions with In, NotIn, Exists and DoesNotExist", () => {
    const selecting = (podSelector: object) =>
      createNetwork({
        namespaces,
        policies: [policy("a", "p", { podSelector: podSelector as never, policyTypes: ["Ingress"] })],
      });
    const isolated = (podSelector: object) => !selecting(podSelector).allows(other, db, 5432);
    expect(isolated({ matchExpressions: [{ key: "app", operator: "In", values: ["db", "cache"] }] })).toBe(
      true,
    );
    expect(isolated({ matchExpressions: [{ key: "app", operator: "NotIn", values: ["db"] }] })).toBe(false);
    expect(isolated({ matchExpressions: [{ key: "app", operator: "Exists" }] })).toBe(true);
    expect(isolated({ matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] })).toBe(true);
    expect(
      isolated({ matchLabels: { app: "db" }, matchExpressions: [{ key: "tier", operator: "Exists" }] }),
    ).toBe(false);
  });

  it("always admits a pod's own node, which NetworkPolicy cannot block", () => {
    const network = createNetwork({
      namespaces,
      policies: [policy("a", "deny", { podSelector: {}, policyTypes: ["Ingress"] })],
    });
    expect(network.allows({ kind: "ip", ip: "192.168.0.11", node: "node-1" }, web, 8080)).toBe(true);
    expect(network.allows({ kind: "ip", ip: "192.168.0.12", node: "node-2" }, web, 8080)).toBe(false);
  });

  it("refuses a peer that mixes ipBlock with selectors, as the API server does", () => {
    expect(() =>
      createNetwork({
        namespaces,
        policies: [
          policy("a", "p", {
            podSelector: {},
            egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/8" }, podSelector: {} }] }],
          }),
        ],
      }),
    ).toThrow(/ipBlock/);
  });
});
