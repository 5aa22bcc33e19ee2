import { describe, expect, it } from "vitest";
import type { Me } from "../../../../common/api.ts";
import { audienceChoices } from "./audiences.ts";

const person = (role: Me["role"], sections: string[] = []): Me => ({ username: "someone", role, sections });

describe("the audiences offered", () => {
  it("are the whole lab, then the page's sections once each and in order, for instructors and course TAs", () => {
    for (const me of [person("instructor", ["x"]), person("ta")]) {
      expect(audienceChoices(me, ["b", "a", "b"])).toEqual([null, "a", "b"]);
      expect(audienceChoices(me, [])).toEqual([null]);
    }
  });

  it("are a sectioned TA's own sections only, whatever the page shows", () => {
    expect(audienceChoices(person("ta", ["b", "c"]), ["a", "b"])).toEqual(["b", "c"]);
  });
});
