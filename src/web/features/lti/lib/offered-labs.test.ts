import { describe, expect, it } from "vitest";
import { localizeOffer } from "./offered-labs.ts";

const linuxBasics = {
  id: "linux-basics",
  title: "Linux basics",
  description: "Use a shell",
  translations: { title: { ja: "Linux の基本" }, description: { ja: "シェルを使う" } },
};

describe("offered labs", () => {
  it("are in the reader's language where the lab file has it", () => {
    expect(localizeOffer([linuxBasics], "ja")).toEqual([
      {
        id: "linux-basics",
        title: { text: "Linux の基本", lang: "ja" },
        description: { text: "シェルを使う", lang: "ja" },
      },
    ]);
  });

  it("fall back to English, and to no description when the lab has none", () => {
    expect(localizeOffer([linuxBasics, { id: "git-workflow", title: "Git workflow" }], "zh")).toEqual([
      {
        id: "linux-basics",
        title: { text: "Linux basics", lang: "en" },
        description: { text: "Use a shell", lang: "en" },
      },
      { id: "git-workflow", title: { text: "Git workflow", lang: "en" }, description: null },
    ]);
  });
});
