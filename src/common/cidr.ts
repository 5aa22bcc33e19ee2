// IPv4 and IPv6 address ranges (CIDR notation) as NetworkPolicy ipBlocks take them: parsing, the
// canonical spelling, containment and overlap. Shared by the lab format (which refuses ranges that
// include the metadata endpoint) and the server (which refuses the cluster's own ranges and decides
// which peers are its proxies), so every setting reads addresses the same way.

export type IpFamily = 4 | 6;

export interface Cidr {
  family: IpFamily;
  /** The network address as a number: 32 bits for IPv4, 128 for IPv6. */
  network: bigint;
  prefix: number;
  /** Canonical spelling: dotted quad, or RFC 5952 lowercase with the longest zero run as `::`. */
  text: string;
}

export type ParsedCidr =
  | { ok: true; cidr: Cidr }
  | { ok: false; problem: "syntax" }
  /** A valid address and prefix, but with bits set after the prefix; `canonical` is the range meant. */
  | { ok: false; problem: "host-bits"; canonical: string };

const bitsOf = (family: IpFamily) => (family === 4 ? 32 : 128);

// No leading zeros: "010" is octal to some parsers and decimal to others.
const octetPattern = /^(0|[1-9][0-9]{0,2})$/;
const groupPattern = /^[0-9a-fA-F]{1,4}$/;

/** An address without a prefix, or undefined. Zones (`%eth0`) are refused: they name no range. */
export function parseIp(text: string): { family: IpFamily; value: bigint } | undefined {
  if (text.includes(":")) {
    const value = parseIpv6(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  const value = parseIpv4(text);
  return value === undefined ? undefined : { family: 4, value };
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!octetPattern.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

function parseIpv6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): bigint[] | undefined => {
    if (half === "") return [];
    const parts = half.split(":");
    const groups: bigint[] = [];
    for (const [index, part] of parts.entries()) {
      // The last 32 bits may be written as a dotted quad (::ffff:192.0.2.1).
      if (index === parts.length - 1 && part.includes(".")) {
        const v4 = parseIpv4(part);
        if (v4 === undefined) return undefined;
        groups.push(v4 >> 16n, v4 & 0xffffn);
      } else if (groupPattern.test(part)) {
        groups.push(BigInt(Number.parseInt(part, 16)));
      } else {
        return undefined;
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0] ?? "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "") : [];
  if (head === undefined || tail === undefined) return undefined;
  // A dotted quad may only end the address.
  if (halves.length === 2 && (halves[0] ?? "").includes(".")) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<bigint>(halves.length === 2 ? missing : 0).fill(0n), ...tail];
  return groups.reduce((value, group) => (value << 16n) | group, 0n);
}

export function parseCidr(text: string): ParsedCidr {
  const slash = text.indexOf("/");
  if (slash < 0) return { ok: false, problem: "syntax" };
  const address = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!address || !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return { ok: false, problem: "syntax" };
  const prefix = Number(prefixText);
  if (prefix > bitsOf(address.family)) return { ok: false, problem: "syntax" };
  const network = address.value & mask(address.family, prefix);
  const canonical = `${formatIp(address.family, network)}/${prefix}`;
  if (network !== address.value) return { ok: false, problem: "host-bits", canonical };
  return { ok: true, cidr: { family: address.family, network, prefix, text: canonical } };
}

/**
 * A range, or a bare address as the range of that one address (/32, /128): settings that name hosts
 * (the proxies of TRUST_PROXY) should not make the operator write a prefix for each. A range with host
 * bits is refused as parseCidr refuses it, since masking them would quietly widen one host to a network.
 */
export function parseAddressOrRange(text: string): ParsedCidr {
  if (text.includes("/")) return parseCidr(text);
  const address = parseIp(text);
  if (!address) return { ok: false, problem: "syntax" };
  const { family, value: network } = address;
  const prefix = bitsOf(family);
  return { ok: true, cidr: { family, network, prefix, text: `${formatIp(family, network)}/${prefix}` } };
}

/** parseCidr for ranges known to be valid (constants); throws otherwise. */
export function cidrOf(text: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed.ok) throw new Error(`not a canonical CIDR: ${text}`);
  return parsed.cidr;
}

function mask(family: IpFamily, prefix: number): bigint {
  const bits = BigInt(bitsOf(family));
  const all = (1n << bits) - 1n;
  return (all << (bits - BigInt(prefix))) & all;
}

export function formatIp(family: IpFamily, value: bigint): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
  }
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => Number((value >> shift) & 0xffffn));
  // RFC 5952: the longest run of two or more zero groups (the first of equals) becomes "::".
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8;) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = (list: number[]) => list.map((group) => group.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** Whether every address of `inner` is in `outer` (never across families). */
export function cidrContains(outer: Cidr, inner: Cidr): boolean {
  return (
    outer.family === inner.family &&
    outer.prefix <= inner.prefix &&
    (inner.network & mask(outer.family, outer.prefix)) === outer.network
  );
}

/** Two ranges overlap exactly when one contains the other: CIDR blocks nest or are disjoint. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return cidrContains(a, b) || cidrContains(b, a);
}

export function ipInCidr(ip: string, cidr: Cidr): boolean {
  const address = parseIp(ip);
  return (
    address !== undefined &&
    address.family === cidr.family &&
    (address.value & mask(cidr.family, cidr.prefix)) === cidr.network
  );
}

export type RangeOverlap<T> =
  | { kind: "none" }
  /** `range` lies wholly inside this forbidden range: no except can help. */
  | { kind: "inside"; range: T }
  /** `range` holds these forbidden ranges, and no except covers them. */
  | { kind: "uncovered"; ranges: T[] };

/**
 * How `range` without its `except` ranges meets `forbidden`. An except counts when it covers a
 * forbidden range whole; CIDR blocks nest or are disjoint, so nothing else can overlap.
 */
export function uncoveredRanges<T extends { cidr: Cidr }>(
  range: Cidr,
  except: readonly Cidr[],
  forbidden: readonly T[],
): RangeOverlap<T> {
  const inside = forbidden.find((entry) => cidrContains(entry.cidr, range));
  if (inside) return { kind: "inside", range: inside };
  const uncovered = forbidden.filter(
    (entry) =>
      cidrContains(range, entry.cidr) && !except.some((excepted) => cidrContains(excepted, entry.cidr)),
  );
  return uncovered.length > 0 ? { kind: "uncovered", ranges: uncovered } : { kind: "none" };
}
