// Who this replica is to the others, and where they reach it. The identity is the pod's name (a
// pod's hostname is its name) plus a random suffix, so a pod restarted under the same name is a new
// holder and never mistakes an old lease for its own.
import { randomBytes } from "node:crypto";
import { hostname, networkInterfaces } from "node:os";

export function replicaIdentity(podName: string | undefined): string {
  const base = (podName ?? hostname())
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return `${base || "replica"}-${randomBytes(3).toString("hex")}`;
}

/**
 * Where the other replicas reach this one: the pod's IP (POD_IP from the downward API), else the
 * address it listens on, and for a wildcard address the machine's first non-loopback IPv4 (in a
 * pod, its IP), so that peers never get 127.0.0.1 and reach themselves instead.
 */
export function replicaEndpoint(podIp: string | undefined, host: string, port: number): string {
  const wildcard = host === "0.0.0.0" || host === "::" || host === "";
  const address = podIp ?? (wildcard ? firstExternalIpv4() : host);
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
}

function firstExternalIpv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const external = addresses?.find((address) => address.family === "IPv4" && !address.internal);
    if (external) return external.address;
  }
  return "127.0.0.1";
}
