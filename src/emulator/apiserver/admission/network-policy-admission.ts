// networking.k8s.io/v1 NetworkPolicies as the API server takes them: its defaults (policyTypes from the
// rules, TCP for a port without protocol: SetDefaults_NetworkPolicy, SetDefaults_NetworkPolicyPort)
// and the checks of ValidateNetworkPolicySpec that a hand-written policy trips over, with its
// messages. The emulator stores policies and enforces none: its guests have loopback only.
import { cidrContains, parseCidr } from "../../../common/cidr.ts";
import { field, isJsonObject, type JsonObject } from "../../cluster/objects.ts";
import { invalid, type StatusCause } from "../../http/status.ts";

const protocols = ["TCP", "UDP", "SCTP"];
const policyTypes = ["Ingress", "Egress"];
const cidrExample = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

function quoted(values: string[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}

function invalidValue(path: string, value: unknown, detail: string): StatusCause {
  const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
  return { reason: "FieldValueInvalid", message: `Invalid value: ${shown}: ${detail}`, field: path };
}

function notSupported(path: string, value: unknown, supported: string[]): StatusCause {
  return {
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${quoted(supported)}`,
    field: path,
  };
}

/** Go's net.ParseCIDR accepts host bits after the prefix (10.0.0.1/8), and so does the API server. */
function cidrOrNull(text: string) {
  const parsed = parseCidr(text);
  if (parsed.ok) return parsed.cidr;
  if (parsed.problem === "host-bits") {
    const canonical = parseCidr(parsed.canonical);
    return canonical.ok ? canonical.cidr : null;
  }
  return null;
}

function portNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name.length > 15) problems.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(name))
    problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(name)) problems.push("must contain at least one letter (a-z)");
  if (name.includes("--")) problems.push("must not contain consecutive hyphens");
  if (name.startsWith("-") || name.endsWith("-")) problems.push("must not begin or end with a hyphen");
  return problems;
}

function portCauses(port: unknown, path: string): StatusCause[] {
  if (!isJsonObject(port)) return [];
  const causes: StatusCause[] = [];
  if (port.protocol !== undefined && !protocols.includes(String(port.protocol))) {
    causes.push(notSupported(`${path}.protocol`, port.protocol, protocols));
  }
  const endPort = port.endPort;
  if (typeof port.port === "number") {
    if (port.port < 1 || port.port > 65535)
      causes.push(invalidValue(`${path}.port`, port.port, "must be between 1 and 65535, inclusive"));
    if (typeof endPort === "number") {
      // The API server names port's value here, not endPort's.
      if (endPort < port.port)
        causes.push(invalidValue(`${path}.endPort`, port.port, "must be greater than or equal to `port`"));
      if (endPort < 1 || endPort > 65535)
        causes.push(invalidValue(`${path}.endPort`, endPort, "must be between 1 and 65535, inclusive"));
    }
  } else if (typeof port.port === "string") {
    if (endPort !== undefined)
      causes.push(
        invalidValue(`${path}.endPort`, endPort, "may not be specified when `port` is non-numeric"),
      );
    for (const problem of portNameProblems(port.port))
      causes.push(invalidValue(`${path}.port`, port.port, problem));
  } else if (endPort !== undefined) {
    causes.push(
      invalidValue(`${path}.endPort`, endPort, "may not be specified when `port` is not specified"),
    );
  }
  return causes;
}

function peerCauses(peer: unknown, path: string): StatusCause[] {
  if (!isJsonObject(peer)) return [];
  const given = ["podSelector", "namespaceSelector", "ipBlock"].filter((key) => isJsonObject(peer[key]));
  if (given.length === 0)
    return [{ reason: "FieldValueRequired", message: "Required value: must specify a peer", field: path }];
  if (given.length > 1 && given.includes("ipBlock")) {
    return [
      {
        reason: "FieldValueForbidden",
        message: "Forbidden: may not specify both ipBlock and another peer",
        field: path,
      },
    ];
  }
  const block = peer.ipBlock;
  if (!isJsonObject(block)) return [];
  const cidrText = typeof block.cidr === "string" ? block.cidr : "";
  if (cidrText === "")
    return [{ reason: "FieldValueRequired", message: "Required value", field: `${path}.ipBlock.cidr` }];
  const cidr = cidrOrNull(cidrText);
  if (!cidr) return [invalidValue(`${path}.ipBlock.cidr`, cidrText, cidrExample)];
  const causes: StatusCause[] = [];
  const except = Array.isArray(block.except) ? block.except : [];
  except.forEach((entry, index) => {
    const exceptPath = `${path}.ipBlock.except[${index}]`;
    const text = String(entry);
    const excepted = cidrOrNull(text);
    if (!excepted) {
      causes.push(invalidValue(exceptPath, text, cidrExample));
      return;
    }
    const strictlyInside = excepted.prefix > cidr.prefix && cidrContains(cidr, excepted);
    if (!strictlyInside) causes.push(invalidValue(exceptPath, text, "must be a strict subset of `cidr`"));
  });
  return causes;
}

function rulesCauses(spec: JsonObject, direction: "ingress" | "egress"): StatusCause[] {
  const rules = spec[direction];
  if (!Array.isArray(rules)) return [];
  const peersKey = direction === "ingress" ? "from" : "to";
  return rules.flatMap((rule, index) => {
    const path = `spec.${direction}[${index}]`;
    const ports = field(rule, "ports");
    const peers = field(rule, peersKey);
    return [
      ...(Array.isArray(ports) ? ports.flatMap((port, i) => portCauses(port, `${path}.ports[${i}]`)) : []),
      ...(Array.isArray(peers)
        ? peers.flatMap((peer, i) => peerCauses(peer, `${path}.${peersKey}[${i}]`))
        : []),
    ];
  });
}

function withDefaultProtocols(spec: JsonObject, direction: "ingress" | "egress"): void {
  const rules = spec[direction];
  if (!Array.isArray(rules)) return;
  for (const rule of rules) {
    const ports = field(rule, "ports");
    if (!Array.isArray(ports)) continue;
    for (const port of ports) if (isJsonObject(port) && port.protocol === undefined) port.protocol = "TCP";
  }
}

/** Defaults, then validation; throws the API server's 422 when the policy is invalid. */
export function admitNetworkPolicy(object: JsonObject): JsonObject {
  const spec: JsonObject = isJsonObject(object.spec) ? structuredClone(object.spec) : {};
  withDefaultProtocols(spec, "ingress");
  withDefaultProtocols(spec, "egress");
  const types = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (types.length === 0) {
    // Any policy implies at least Ingress; Egress only with egress rules.
    spec.policyTypes = [
      "Ingress",
      ...(Array.isArray(spec.egress) && spec.egress.length > 0 ? ["Egress"] : []),
    ];
  }
  const causes: StatusCause[] = [];
  const given = spec.policyTypes as unknown[];
  if (given.length > 2) {
    causes.push(
      invalidValue("spec.policyTypes", JSON.stringify(given), "may not specify more than two policyTypes"),
    );
  } else {
    given.forEach((type, index) => {
      if (!policyTypes.includes(String(type)))
        causes.push(notSupported(`spec.policyTypes[${index}]`, type, policyTypes));
    });
  }
  causes.push(...rulesCauses(spec, "ingress"), ...rulesCauses(spec, "egress"));
  if (causes.length > 0) {
    throw invalid(
      { kind: "NetworkPolicy", group: "networking.k8s.io" },
      String(field(object, "metadata", "name") ?? ""),
      causes,
    );
  }
  return { ...object, spec };
}
