import { describe, expect, it } from "vitest";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { localizeOffer } from "./offered-labs.ts";

const catalogLab = {
  id: "linux-basics",
  title: { text: "Linux の基本", lang: "ja" },
  description: { text: "シェルを使う", lang: "ja" },
} as LocalizedLab;

describe("offered labs", () => {
  it("take the catalog's texts in the reader's language", () => {
    const offer = localizeOffer(
      [{ id: "linux-basics", title: "Linux basics", description: "Use a shell" }],
      [catalogLab],
    );
    expect(offer).toEqual([
      { id: "linux-basics", title: catalogLab.title, description: catalogLab.description },
    ]);
  });

  it("fall back to the request's English, and to no description when it has none", () => {
    const offer = localizeOffer([{ id: "git-workflow", title: "Git workflow" }], undefined);
    expect(offer).toEqual([
      { id: "git-workflow", title: { text: "Git workflow", lang: "en" }, description: null },
    ]);
  });
});
