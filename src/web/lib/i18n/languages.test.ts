import { describe, expect, it } from "vitest";
import { matchLanguage } from "./languages.ts";

describe("matchLanguage", () => {
  it("takes the first of the browser's languages that the pages come in", () => {
    expect(matchLanguage(["ja-JP", "en-US"])).toBe("ja");
    expect(matchLanguage(["fr-FR", "zh-CN", "ja"])).toBe("zh");
    expect(matchLanguage(["EN-gb"])).toBe("en");
  });

  it("gives Traditional Chinese readers the Chinese pages, and anyone else English", () => {
    expect(matchLanguage(["zh-TW"])).toBe("zh");
    expect(matchLanguage(["zh-Hant-HK"])).toBe("zh");
    expect(matchLanguage(["ko-KR", "de"])).toBe("en");
    expect(matchLanguage([])).toBe("en");
  });
});
