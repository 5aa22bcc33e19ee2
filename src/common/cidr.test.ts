import { describe, expect, it } from "vitest";
import { cidrContains, cidrsOverlap, ipInCidr, parseAddressOrRange, parseCidr, parseIp } from "./cidr.ts";

function cidr(text: string) {
  const parsed = parseCidr(text);
  if (!parsed.ok) throw new Error(`${text} did not parse: ${parsed.problem}`);
  return parsed.cidr;
}

describe("parseCidr", () => {
  it("reads IPv4 and IPv6 ranges and writes them canonically", () => {
    expect(cidr("203.0.113.0/24")).toMatchObject({ family: 4, prefix: 24, text: "203.0.113.0/24" });
    expect(cidr("0.0.0.0/0")).toMatchObject({ family: 4, prefix: 0, text: "0.0.0.0/0" });
    expect(cidr("10.1.2.3/32").text).toBe("10.1.2.3/32");
    expect(cidr("2001:DB8:0:0::/48")).toMatchObject({ family: 6, prefix: 48, text: "2001:db8::/48" });
    expect(cidr("::/0").text).toBe("::/0");
    expect(cidr("fd00:ec2::254/128").text).toBe("fd00:ec2::254/128");
    expect(cidr("::ffff:169.254.169.254/128").text).toBe("::ffff:a9fe:a9fe/128");
    expect(cidr("2001:db8:0:1:0:0:0:0/64").text).toBe("2001:db8:0:1::/64");
  });

  it("refuses what is not a range, naming the canonical range when only host bits are set", () => {
    const problem = (text: string) => {
      const parsed = parseCidr(text);
      return parsed.ok ? "parsed" : parsed.problem;
    };
    for (const text of [
      "",
      "10.0.0.0",
      "10.0.0/8",
      "256.0.0.0/8",
      "10.0.0.0/33",
      "10.0.0.0/-1",
      "10.0.0.0/08",
      "010.0.0.0/8",
      " 10.0.0.0/8",
      "10.0.0.0/8 ",
      "2001:db8::/129",
      "2001:db8:::/48",
      "2001:db8::1::/64",
      "1:2:3:4:5:6:7:8:9/128",
      "fe80::1%eth0/128",
      "example.com/24",
    ]) {
      expect(problem(text), text).toBe("syntax");
    }
    const hostBits = parseCidr("203.0.113.7/24");
    expect(hostBits).toEqual({ ok: false, problem: "host-bits", canonical: "203.0.113.0/24" });
    expect(parseCidr("2001:db8::1/64")).toEqual({
      ok: false,
      problem: "host-bits",
      canonical: "2001:db8::/64",
    });
  });
});

describe("parseAddressOrRange", () => {
  it("reads a bare address as the range of that one address, and a range as parseCidr does", () => {
    const range = (text: string) => {
      const parsed = parseAddressOrRange(text);
      return parsed.ok ? parsed.cidr.text : parsed.problem;
    };
    expect(range("192.168.1.7")).toBe("192.168.1.7/32");
    expect(range("2001:DB8::0:1")).toBe("2001:db8::1/128");
    expect(range("10.0.0.0/8")).toBe("10.0.0.0/8");
    expect(range("fd00::/8")).toBe("fd00::/8");
    for (const text of [
      "",
      "10.1.2.300",
      "010.0.0.1",
      "fe80::1%eth0",
      "10.0.0.0/33",
      "10.0.0.0/8/8",
      "proxy.example",
    ]) {
      expect(range(text), text).toBe("syntax");
    }
  });

  it("refuses host bits after the prefix, naming the range meant", () => {
    expect(parseAddressOrRange("10.0.0.1/8")).toEqual({
      ok: false,
      problem: "host-bits",
      canonical: "10.0.0.0/8",
    });
    expect(parseAddressOrRange("fd00::1/8")).toEqual({
      ok: false,
      problem: "host-bits",
      canonical: "fd00::/8",
    });
  });
});

describe("containment and overlap", () => {
  it("compares ranges of one family only", () => {
    expect(cidrContains(cidr("0.0.0.0/0"), cidr("169.254.0.0/16"))).toBe(true);
    expect(cidrContains(cidr("169.254.0.0/16"), cidr("169.254.169.254/32"))).toBe(true);
    expect(cidrContains(cidr("169.254.169.254/32"), cidr("169.254.0.0/16"))).toBe(false);
    expect(cidrContains(cidr("10.0.0.0/8"), cidr("10.0.0.0/8"))).toBe(true);
    expect(cidrContains(cidr("::/0"), cidr("10.0.0.0/8"))).toBe(false);
    expect(cidrsOverlap(cidr("10.1.0.0/16"), cidr("10.0.0.0/8"))).toBe(true);
    expect(cidrsOverlap(cidr("10.0.0.0/8"), cidr("10.1.0.0/16"))).toBe(true);
    expect(cidrsOverlap(cidr("10.0.0.0/8"), cidr("11.0.0.0/8"))).toBe(false);
    expect(cidrsOverlap(cidr("::/0"), cidr("0.0.0.0/0"))).toBe(false);
  });

  it("places single addresses", () => {
    expect(parseIp("10.96.0.1")).toMatchObject({ family: 4 });
    expect(parseIp("2001:db8::1")).toMatchObject({ family: 6 });
    expect(parseIp("10.96.0.1/32")).toBeUndefined();
    expect(ipInCidr("10.96.0.1", cidr("10.96.0.0/12"))).toBe(true);
    expect(ipInCidr("10.112.0.1", cidr("10.96.0.0/12"))).toBe(false);
    expect(ipInCidr("2001:db8::1", cidr("10.0.0.0/8"))).toBe(false);
  });
});
