// Who the client is. Behind proxies, X-Forwarded-For lists every address a request passed, and
// anyone may write into it, so only the proxies the operator named (TRUST_PROXY: how many stand in
// front, or their addresses) are believed: the client is the right-most address that no trusted proxy
// vouches for. One trust decision for everything: request.ip (rate limits, the audit log),
// request.protocol (Secure cookies, HSTS), request.host (X-Forwarded-Host, the Host check) and the cap
// on connections per address.
import { BlockList } from "node:net";
import { formatIp, parseAddressOrRange, parseIp } from "../../common/cidr.ts";

export type TrustedProxies =
  /** This many proxies stand in front, whoever they are (an Ingress, a load balancer before it...). */
  | { kind: "hops"; hops: number }
  /** The proxies' addresses and ranges (CIDR): anyone else is a client, whatever it says. */
  | { kind: "addresses"; addresses: string[] };

/** fastify's trustProxy function: is `address`, `hop` steps from the BFF (0: its peer), a proxy? */
export type ProxyTest = (address: string, hop: number) => boolean;

/** Undefined trusts no proxy: every X-Forwarded-* header is ignored. */
export function trustsProxy(trusted: TrustedProxies | undefined): ProxyTest {
  if (trusted === undefined) return () => false;
  // fastify's own number form trusts nothing (it cannot check the peer); a hop count means exactly
  // that many hops are proxies, as proxy-addr counts them.
  if (trusted.kind === "hops") return (_address, hop) => hop < trusted.hops;
  // BlockList matches an IPv4 address and its IPv4-mapped IPv6 form (a dual-stack socket's
  // ::ffff:10.1.2.3) as one address, against ranges of either family.
  const list = new BlockList();
  for (const entry of trusted.addresses) {
    // The configuration refuses entries that are no address or range, and ranges with host bits; any
    // that get here another way trust no one rather than a guess at what was meant.
    const parsed = parseAddressOrRange(entry);
    if (!parsed.ok) continue;
    const { family, network, prefix } = parsed.cidr;
    list.addSubnet(formatIp(family, network), prefix, family === 4 ? "ipv4" : "ipv6");
  }
  return (address) => {
    const bare = withoutZone(address);
    const ip = parseIp(bare);
    return ip !== undefined && list.check(bare, ip.family === 4 ? "ipv4" : "ipv6");
  };
}

/**
 * What limits count a client under: an IPv4 address, or the /64 of an IPv6 one, since one site (a
 * home, a lab room) is given a whole /64 and could otherwise take a fresh address for every try.
 */
export function addressKey(address: string): string {
  const plain = unmapped(withoutZone(address));
  const ip = parseIp(plain);
  if (ip?.family !== 6) return plain;
  // Canonical spelling, so every way of writing one /64 is counted under one key.
  return `${formatIp(6, (ip.value >> 64n) << 64n)}/64`;
}

/** `::ffff:10.1.2.3` (an IPv4 client of a dual-stack socket) is 10.1.2.3. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return match?.[1] ?? address;
}

/**
 * A link-local IPv6 peer comes with the interface it was reached on (fe80::1%eth0), which says which
 * cable, not who: it is matched and counted by its address alone.
 */
function withoutZone(address: string): string {
  return address.replace(/^([0-9a-f:.]*:[0-9a-f:.]*)%[^%]+$/i, "$1");
}
