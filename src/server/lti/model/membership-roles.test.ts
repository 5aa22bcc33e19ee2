import { describe, expect, it } from "vitest";
import { ltiRole } from "./membership-roles.ts";

const membership = (role: string) => `http://purl.imsglobal.org/vocab/lis/v2/membership${role}`;

describe("the Lab Console role of an LTI membership", () => {
  it.each([
    [[membership("#Learner")], "student"],
    [["Learner"], "student"],
    [[membership("#Instructor")], "instructor"],
    [[membership("#Administrator")], "instructor"],
    [[membership("#ContentDeveloper")], "instructor"],
    // A TA comes as the principal role with its sub-role: the sub-role decides.
    [[membership("#Instructor"), membership("/Instructor#TeachingAssistant")], "ta"],
    [[membership("/Instructor#TeachingAssistant")], "ta"],
    [["TeachingAssistant", "Learner"], "ta"],
    [[membership("#Learner"), membership("/Instructor#TeachingAssistant")], "ta"],
    // Highest wins: an administrator of the course who is also a TA instructs.
    [[membership("#Administrator"), membership("/Instructor#TeachingAssistant")], "instructor"],
    [[membership("#Learner"), membership("#Instructor")], "instructor"],
  ] as const)("%j -> %s", (roles, role) => {
    expect(ltiRole(roles)).toBe(role);
  });

  it("leaves out institution and system roles, and roles it has no place for", () => {
    expect(ltiRole(["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"])).toBeUndefined();
    expect(ltiRole(["http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"])).toBeUndefined();
    expect(ltiRole([membership("#Mentor")])).toBeUndefined();
    expect(ltiRole([])).toBeUndefined();
  });
});
