import { describe, expect, it } from "vitest";
import { addressKey, trustsProxy } from "./client-address.ts";

describe("trustsProxy", () => {
  it("with a hop count, trusts that many hops from the BFF, whoever they are", () => {
    const trust = trustsProxy({ kind: "hops", hops: 2 });
    expect(trust("198.51.100.1", 0)).toBe(true);
    expect(trust("198.51.100.2", 1)).toBe(true);
    expect(trust("203.0.113.66", 2)).toBe(false);
  });

  it("with addresses, trusts exactly those, at any hop, IPv4-mapped addresses included", () => {
    const trust = trustsProxy({ kind: "addresses", addresses: ["10.0.0.0/8", "192.168.1.7", "fd00::/8"] });
    expect(trust("10.42.0.17", 0)).toBe(true);
    expect(trust("::ffff:10.42.0.17", 0)).toBe(true);
    expect(trust("192.168.1.7", 3)).toBe(true);
    expect(trust("192.168.1.8", 0)).toBe(false);
    expect(trust("fd12:3456::1", 1)).toBe(true);
    expect(trust("2001:db8::1", 0)).toBe(false);
    expect(trust("not an address", 0)).toBe(false);
  });

  it("trusts no one for a range with host bits, which the configuration refuses", () => {
    const trust = trustsProxy({ kind: "addresses", addresses: ["10.0.0.1/8"] });
    expect(trust("10.0.0.1", 0)).toBe(false);
    expect(trust("10.42.0.17", 0)).toBe(false);
  });

  it("without a setting, trusts no one", () => {
    expect(trustsProxy(undefined)("127.0.0.1", 0)).toBe(false);
  });
});

describe("addressKey", () => {
  it("counts an IPv4 address as itself, and an IPv6 address by its /64, which one site gets", () => {
    expect(addressKey("203.0.113.66")).toBe("203.0.113.66");
    expect(addressKey("::ffff:203.0.113.66")).toBe("203.0.113.66");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:0db8:0001:0002:ffff:1:2:3"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("::1")).toBe(addressKey("::2"));
    expect(addressKey("2001:DB8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("not an address")).toBe("not an address");
  });
});
