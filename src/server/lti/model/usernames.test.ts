import { describe, expect, it } from "vitest";
import type { Platform } from "./model.ts";
import { ltiUsername } from "./usernames.ts";

const canvas = { id: "canvas-state-u" } as Platform;

describe("the username of a person from an LMS", () => {
  it("is their email in lower case when the platform gives one", () => {
    expect(ltiUsername(canvas, { userId: "8f2c", email: " Alice.Liddell@School.EDU " })).toBe(
      "alice.liddell@school.edu",
    );
  });

  it("is their id at the platform, qualified by the platform, without one", () => {
    expect(ltiUsername(canvas, { userId: "8f2c" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "" })).toBe("8f2c@canvas-state-u");
  });

  it("never takes a name without an @, which could be a demo or OpenID Connect user's", () => {
    expect(ltiUsername(canvas, { userId: "8f2c", email: "ivan" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "a@b@c" })).toBe("8f2c@canvas-state-u");
  });
});
