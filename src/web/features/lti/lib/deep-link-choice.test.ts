import { describe, expect, it } from "vitest";
import { choiceProblem, chosenInCatalogOrder, maxLabsPerAnswer, toggleLab } from "./deep-link-choice.ts";

describe("deep-link choice", () => {
  it("adds and removes labs when the LMS accepts several", () => {
    const both = toggleLab(toggleLab([], "a", true, true), "b", true, true);
    expect(both).toEqual(["a", "b"]);
    expect(toggleLab(both, "a", true, true)).toEqual(["a", "b"]);
    expect(toggleLab(both, "a", false, true)).toEqual(["b"]);
  });

  it("keeps only the last lab when the LMS accepts one", () => {
    expect(toggleLab(["a"], "b", true, false)).toEqual(["b"]);
    expect(toggleLab(["a"], "a", false, false)).toEqual([]);
  });

  it("needs at least one lab and at most the answer's limit", () => {
    expect(choiceProblem([])).toBe("none-chosen");
    expect(choiceProblem(["a"])).toBeNull();
    const many = Array.from({ length: maxLabsPerAnswer + 1 }, (_, index) => `lab-${index}`);
    expect(choiceProblem(many)).toBe("too-many");
    expect(choiceProblem(many.slice(1))).toBeNull();
  });

  it("sends the chosen labs in the catalog's order, without any the catalog no longer offers", () => {
    const labs = [
      { id: "a", title: "A" },
      { id: "b", title: "B" },
      { id: "c", title: "C" },
    ];
    expect(chosenInCatalogOrder(labs, ["c", "gone", "a"])).toEqual(["a", "c"]);
  });
});
