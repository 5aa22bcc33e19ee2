import { describe, expect, it } from "vitest";
import { sectionPattern } from "../../../common/api.ts";
import { ltiSectionName, ltiSectionNames } from "./section-names.ts";

describe("an LMS's section or group as a section name", () => {
  it.each([
    ["tue-2pm", "tue-2pm"],
    ["CS 101 - Tue 2pm", "cs-101-tue-2pm"],
    ["sec_7/A", "sec_7-a"],
    ["  Lab Group (B)  ", "lab-group-b"],
    ["Café Été", "cafe-ete"],
    ["12", "12"],
  ])("%j -> %j", (raw, name) => {
    expect(ltiSectionName(raw)).toBe(name);
  });

  it("keeps names within the pattern whatever they were, and drops what leaves nothing", () => {
    const long = ltiSectionName(`${"a".repeat(62)}-b`);
    expect(long).toBe("a".repeat(62));
    expect(ltiSectionName("x".repeat(200))).toMatch(sectionPattern);
    expect(ltiSectionName("!!!")).toBeUndefined();
    expect(ltiSectionName("日本語")).toBeUndefined();
  });

  it("gives each name once, in the order first given", () => {
    expect(ltiSectionNames(["Tue 2pm", "tue-2pm", "Wed", "", "TUE 2PM"])).toEqual(["tue-2pm", "wed"]);
  });
});
