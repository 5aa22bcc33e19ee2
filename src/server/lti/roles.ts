// LTI membership roles (LIS vocabulary) as Lab Console roles. A person with several gets the highest,
// except that a teaching assistant is a TA even though the vocabulary files TAs under Instructor.
import type { Role } from "../../common/api.ts";

const membership = "http://purl.imsglobal.org/vocab/lis/v2/membership";
const institution = "http://purl.imsglobal.org/vocab/lis/v2/institution/person";

/** The role for these LTI role URIs (short forms like "Learner" too, as LTI 1.1-era platforms send), or null. */
export function roleOfLtiRoles(roles: readonly string[]): Role | null {
  const names = roles.map(shortName);
  if (names.some((name) => name === "TeachingAssistant" || name.endsWith("#TeachingAssistant"))) return "ta";
  if (names.some((name) => ["Instructor", "Administrator", "ContentDeveloper"].includes(name)))
    return "instructor";
  if (names.some((name) => ["Learner", "Student"].includes(name) || name.startsWith("Learner#")))
    return "student";
  return null;
}

function shortName(role: string): string {
  for (const prefix of [`${membership}#`, `${membership}/`, `${institution}#`]) {
    if (role.startsWith(prefix)) return role.slice(prefix.length);
  }
  return role;
}
