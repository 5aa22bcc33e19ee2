import { describe, expect, it } from "vitest";
import { formatBytes, formatMillicores, parseMillicores, parseQuantity } from "./quantity.ts";

const gib = 2 ** 30;

describe("quantities", () => {
  it("reads the suffixes nodes and pods report", () => {
    expect(parseQuantity("128Gi")).toBe(128 * gib);
    expect(parseQuantity("131817884Ki")).toBe(131_817_884 * 1024);
    expect(parseQuantity("35M")).toBe(35e6);
    expect(parseQuantity("1k")).toBe(1000);
    expect(parseQuantity("1e3")).toBe(1000);
    expect(parseQuantity(2)).toBe(2);
    expect(parseQuantity("lots")).toBeUndefined();
    expect(parseQuantity("4GB")).toBeUndefined();
    expect(parseQuantity(undefined)).toBeUndefined();
  });

  it("reads CPU in millicores, rounding a fraction of one up as Kubernetes does", () => {
    expect(parseMillicores("31750m")).toBe(31_750);
    expect(parseMillicores("2")).toBe(2000);
    expect(parseMillicores("0.1")).toBe(100);
    expect(parseMillicores("0.0001")).toBe(1);
  });

  it("writes the API server's canonical forms", () => {
    expect(formatMillicores(200)).toBe("200m");
    expect(formatMillicores(2000)).toBe("2");
    expect(formatBytes(4372 * 2 ** 20)).toBe("4372Mi");
    expect(formatBytes(4 * gib)).toBe("4Gi");
    expect(formatBytes(35e6)).toBe("35000000");
  });
});
