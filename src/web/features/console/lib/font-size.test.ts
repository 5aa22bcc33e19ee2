import { describe, expect, it } from "vitest";
import { clampFontSize, fontSizes, loadFontSize, saveFontSize } from "./font-size.ts";

function memoryStorage() {
  const values = new Map<string, string>();
  return {
    getItem: (key: string) => values.get(key) ?? null,
    setItem: (key: string, value: string) => void values.set(key, value),
  };
}

describe("console font size", () => {
  it("keeps a size between visits and ignores anything unusable", () => {
    const storage = memoryStorage();
    expect(loadFontSize(storage)).toBe(fontSizes.default);
    saveFontSize(18, storage);
    expect(loadFontSize(storage)).toBe(18);
    storage.setItem("lab-console.console-font-size", "900");
    expect(loadFontSize(storage)).toBe(fontSizes.default);
  });

  it("stays within the readable range", () => {
    expect(clampFontSize(2)).toBe(fontSizes.min);
    expect(clampFontSize(99)).toBe(fontSizes.max);
    expect(clampFontSize(15.4)).toBe(15);
  });
});
