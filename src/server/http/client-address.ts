// Who the client is. Behind proxies, X-Forwarded-For lists every address a request passed, and
// anyone may write into it, so only the proxies the operator named (TRUST_PROXY: how many stand in
// front, or their addresses) are believed: the client is the right-most address that no trusted proxy
// vouches for. One trust decision for everything: request.ip (rate limits, the audit log),
// request.protocol (Secure cookies, HSTS), request.host (X-Forwarded-Host, the Host check) and the cap
// on connections per address.
import { BlockList, isIP } from "node:net";

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
  const list = new BlockList();
  for (const entry of trusted.addresses) {
    const range = parseRange(entry);
    if (range) list.addSubnet(range.address, range.prefix, range.family);
  }
  return (address) => {
    const plain = unmapped(address);
    const version = isIP(plain);
    return version !== 0 && list.check(plain, version === 4 ? "ipv4" : "ipv6");
  };
}

/** An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`, `192.168.1.7`); undefined when it is neither. */
export function parseRange(
  text: string,
): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const [address = "", prefixText, ...rest] = text.split("/");
  const version = isIP(address);
  if (version === 0 || rest.length > 0 || address.includes("%")) return undefined;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * What limits count a client under: an IPv4 address, or the /64 of an IPv6 one, since one site (a
 * home, a lab room) is given a whole /64 and could otherwise take a fresh address for every try.
 */
export function addressKey(address: string): string {
  const plain = unmapped(address);
  if (isIP(plain) !== 6) return plain;
  return expandIpv6(plain).slice(0, 4).join(":") + "::/64";
}

/** `::ffff:10.1.2.3` (an IPv4 client of a dual-stack socket) is 10.1.2.3. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return match?.[1] ?? address;
}

/** The groups of a valid IPv6 address, without leading zeros (a trailing dotted quad stays as it is). */
function expandIpv6(address: string): string[] {
  const [head = "", tail] = address.toLowerCase().split("::");
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"));
  // A dotted quad at the end stands for two groups.
  const width = (groups: string[]) => groups.reduce((sum, group) => sum + (group.includes(".") ? 2 : 1), 0);
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const missing = Math.max(0, 8 - width(front) - width(back));
  return [...front, ...Array<string>(missing).fill("0"), ...back].map((group) =>
    group.includes(".") ? group : Number.parseInt(group, 16).toString(16),
  );
}
