// Who sees which sessions, in one place: the sessions service's reads (and so every session route,
// the lists and the class wall), the recordings that outlive their sessions, the sections staff may
// announce to, and the section a new session is put in. A session someone may not see does not
// exist for them (404), so ids reveal nothing.
import type { Me } from "../../common/api.ts";

/** What decides who may see a session: whose it is, and the section it was started in. */
export interface SessionScope {
  owner: string;
  section: string | null;
}

/**
 * The sections a member of staff acts on: "any" for instructors (whatever they list) and for a TA in
 * no section, a TA of the whole course (so a course without sections works as if sections did not
 * exist); a TA's own sections otherwise. Seeing sessions and announcing both go by it.
 */
export function staffSections(user: Me): "any" | readonly string[] {
  return user.role === "ta" && user.sections.length > 0 ? user.sections : "any";
}

/** Whether staff act on `section`; null (no section, or the whole lab) only when they act on any. */
export function staffActsOn(user: Me, section: string | null): boolean {
  const sections = staffSections(user);
  return sections === "any" || (section !== null && sections.includes(section));
}

/** Owners see their own sessions; otherwise students see nothing, and staff their sections'. */
export function maySeeSession(user: Me, session: SessionScope): boolean {
  if (session.owner === user.username) return true;
  return user.role !== "student" && staffActsOn(user, session.section);
}

/**
 * Names what maySeeSession decides by for this person: two people with the same key see the same
 * sessions, so answers kept by it (ETags) never pass from one scope to another.
 */
export function sessionScopeKey(user: Me): string {
  if (user.role === "student") return `student:${user.username}`;
  const sections = staffSections(user);
  return sections === "any" ? "everything" : `ta:${user.username}:${[...sections].sort().join(",")}`;
}

/** The section a person's new session is in: their first (a student normally has one), or none. */
export function launchSectionOf(user: Me): string | null {
  return user.sections[0] ?? null;
}
