import { describe, expect, it } from "vitest";
import { loadScreenReaderMode, saveScreenReaderMode } from "./screen-reader-mode.ts";

function memoryStorage() {
  const values = new Map<string, string>();
  return {
    getItem: (key: string) => values.get(key) ?? null,
    setItem: (key: string, value: string) => void values.set(key, value),
  };
}

describe("screen reader mode", () => {
  it("is off until chosen, and keeps the choice between visits", () => {
    const storage = memoryStorage();
    expect(loadScreenReaderMode(storage)).toBe(false);
    saveScreenReaderMode(true, storage);
    expect(loadScreenReaderMode(storage)).toBe(true);
    saveScreenReaderMode(false, storage);
    expect(loadScreenReaderMode(storage)).toBe(false);
  });

  it("survives storage that refuses to save", () => {
    const refusing = {
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
    };
    expect(() => saveScreenReaderMode(true, refusing)).not.toThrow();
  });
});
