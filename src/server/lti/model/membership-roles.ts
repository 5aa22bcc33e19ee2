// The Lab Console role of an LTI membership (the roles claim of a launch, a member's roles in NRPS):
// Instructor, Administrator or ContentDeveloper of the context -> instructor; a teaching assistant
// -> ta; Learner or Student -> student; the highest wins. LTI asks that a sub-role come with its
// principal role, so a TA arrives as Instructor and Instructor#TeachingAssistant together: the
// sub-role says which kind of instructor, and makes them a TA. Institution and system roles say
// what someone is at the school, not in this course, and count for nothing here.
import type { Role } from "../../../common/api.ts";

const contextRolePrefix = "http://purl.imsglobal.org/vocab/lis/v2/membership";

/** A role URI as `Principal` or `Principal#SubRole`; undefined for a role of another vocabulary. */
function contextRole(uri: string): string | undefined {
  if (uri.startsWith(`${contextRolePrefix}#`)) return uri.slice(contextRolePrefix.length + 1);
  if (uri.startsWith(`${contextRolePrefix}/`)) return uri.slice(contextRolePrefix.length + 1);
  // LTI 1.3 keeps the short names of LTI 1.1 for context roles ("Instructor", "Learner").
  if (/^[A-Za-z]+(#[A-Za-z]+)?$/.test(uri)) return uri;
  return undefined;
}

const instructorRoles = new Set(["Instructor", "Administrator", "ContentDeveloper"]);
const studentRoles = new Set(["Learner", "Student"]);

const principalOf = (role: string) => role.split("#")[0] ?? role;

export function ltiRole(roles: readonly string[]): Role | undefined {
  const named = roles.flatMap((uri) => contextRole(uri) ?? []);
  const assistant = named.some((role) => role === "TeachingAssistant" || role.endsWith("#TeachingAssistant"));
  // An Instructor principal beside the TeachingAssistant sub-role is the TA's own principal role.
  const instructing = named.some(
    (role) => instructorRoles.has(principalOf(role)) && !(assistant && principalOf(role) === "Instructor"),
  );
  if (instructing) return "instructor";
  if (assistant) return "ta";
  if (named.some((role) => studentRoles.has(principalOf(role)))) return "student";
  return undefined;
}
