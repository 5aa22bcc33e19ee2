// Who sees which sessions, in one place: the sessions service's reads (and so every session route,
// the lists and the class wall), the recordings that outlive their sessions, and the section a new
// session is put in. A session someone may not see does not exist for them (404), so ids reveal
// nothing.
import type { Me } from "../../common/api.ts";

/** What decides who may see a session: whose it is, and the section it was started in. */
export interface SessionScope {
  owner: string;
  section: string | null;
}

/**
 * Owners see their own sessions; otherwise students see nothing, instructors everything, and a TA the
 * sessions of their sections. A TA listed in no section is a TA of the whole course (and a course
 * without sections works as if sections did not exist).
 */
export function maySeeSession(user: Me, session: SessionScope): boolean {
  if (session.owner === user.username) return true;
  switch (user.role) {
    case "student":
      return false;
    case "instructor":
      return true;
    case "ta":
      return (
        user.sections.length === 0 || (session.section !== null && user.sections.includes(session.section))
      );
  }
}

/**
 * Names what maySeeSession decides by for this person: two people with the same key see the same
 * sessions, so answers kept by it (ETags) never pass from one scope to another.
 */
export function sessionScopeKey(user: Me): string {
  if (user.role === "student") return `student:${user.username}`;
  if (user.role === "ta" && user.sections.length > 0) {
    return `ta:${user.username}:${[...user.sections].sort().join(",")}`;
  }
  return "everything";
}

/** The section a person's new session is in: their first (a student normally has one), or none. */
export function launchSectionOf(user: Me): string | null {
  return user.sections[0] ?? null;
}
