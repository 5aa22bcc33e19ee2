import { describe, expect, it } from "vitest";
import { formatSize } from "./format-size.ts";

describe("formatSize", () => {
  it("writes small recordings in bytes, larger ones in kB and MB with one decimal at most", () => {
    expect(formatSize(0, "en")).toBe("0 bytes");
    expect(formatSize(999, "en")).toBe("999 bytes");
    expect(formatSize(1000, "en")).toBe("1 kB");
    expect(formatSize(12_345, "en")).toBe("12.3 kB");
    expect(formatSize(999_949, "en")).toBe("999.9 kB");
    expect(formatSize(999_960, "en")).toBe("1 MB");
    expect(formatSize(16_777_216, "en")).toBe("16.8 MB");
  });

  it("uses the locale's separators and unit names", () => {
    expect(formatSize(1_234_567, "de")).toBe("1,2 MB");
    expect(formatSize(512, "ja-JP")).toBe("512 バイト");
    expect(formatSize(512, "zh-CN")).toBe("512字节");
  });
});
