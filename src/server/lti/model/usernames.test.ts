import { describe, expect, it } from "vitest";
import { ltiUsername } from "./usernames.ts";

const canvas = { id: "canvas-state-u", emailDomains: ["School.edu"] };

describe("the username of a person from an LMS", () => {
  it("is their email in lower case when it is in a domain the platform speaks for", () => {
    expect(ltiUsername(canvas, { userId: "8f2c", email: " Alice.Liddell@School.EDU " })).toBe(
      "alice.liddell@school.edu",
    );
  });

  it("is their id at the platform, qualified by the platform, without such an email", () => {
    expect(ltiUsername(canvas, { userId: "8f2c" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "alice@elsewhere.edu" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername({ ...canvas, emailDomains: [] }, { userId: "8f2c", email: "alice@school.edu" })).toBe(
      "8f2c@canvas-state-u",
    );
  });

  it("never takes a name another sign-in could give: no @, or a subdomain the platform was not given", () => {
    expect(ltiUsername(canvas, { userId: "8f2c", email: "ivan" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "a@b@school.edu" })).toBe("8f2c@canvas-state-u");
    expect(ltiUsername(canvas, { userId: "8f2c", email: "a@evil.school.edu" })).toBe("8f2c@canvas-state-u");
  });
});
