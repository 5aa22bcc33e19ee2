// An NRPS member as a roster row: the Lab Console name they sign in as (the launch's rule,
// usernames.ts), their role here (membership-roles.ts), and their sections from whatever the
// platform gives: the groups of LTI Course Groups (`group_enrollments`, Moodle's and D2L's), and the
// LIS claim's course_section_sourcedid in the member's `message` (Canvas and Blackboard give one when
// asked with `rlid`). Each becomes a section name as the launch makes them (section-names.ts).
import { ltiRole } from "../model/membership-roles.ts";
import type { Platform } from "../model/model.ts";
import { ltiSectionNames } from "../model/section-names.ts";
import { ltiUsername } from "../model/usernames.ts";
import type { NrpsMember } from "./nrps-client.ts";
import type { RosterMemberRecord } from "./repository.ts";

const lisClaim = "https://purl.imsglobal.org/spec/lti/claim/lis";
const statuses = ["Active", "Inactive", "Deleted"] as const;
/** A member's sections at most: more is a platform's mistake, and a row must stay small. */
const maxSections = 50;

export function rosterMember(platform: Platform, member: NrpsMember): RosterMemberRecord {
  const email = member.email?.trim().toLowerCase() || null;
  const fullName = [member.given_name, member.family_name].filter(Boolean).join(" ");
  return {
    userId: member.user_id,
    username: ltiUsername(platform, { userId: member.user_id, email: email ?? undefined }),
    name: member.name?.trim() || fullName || null,
    email,
    role: ltiRole(member.roles) ?? null,
    sections: ltiSectionNames(sectionSources(member)).slice(0, maxSections),
    // NRPS: a member without a status is Active.
    status: statuses.find((status) => status === member.status) ?? "Active",
  };
}

/** The roster of a course, one row per user id (the last one given wins, as a later page is newer). */
export function rosterMembers(platform: Platform, members: readonly NrpsMember[]): RosterMemberRecord[] {
  const byUser = new Map<string, RosterMemberRecord>();
  for (const member of members) byUser.set(member.user_id, rosterMember(platform, member));
  return [...byUser.values()];
}

function* sectionSources(member: NrpsMember): Generator<string> {
  for (const group of member.group_enrollments ?? []) yield group.group_id;
  for (const message of member.message ?? []) {
    const lis = message[lisClaim];
    if (typeof lis !== "object" || lis === null) continue;
    const section = (lis as Record<string, unknown>).course_section_sourcedid;
    // LIS allows several, comma-separated.
    if (typeof section === "string") yield* section.split(",");
  }
}
