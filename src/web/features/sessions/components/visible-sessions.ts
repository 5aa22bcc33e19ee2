import type { Session, SessionList } from "../../../../common/api.ts";

/** The sessions a person still has, newest first: ended ones are history, not something to act on. */
export function visibleSessions(list: SessionList | undefined): Session[] {
  return (list?.items ?? [])
    .filter((session) => session.status !== "deleted")
    .toSorted((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
}
