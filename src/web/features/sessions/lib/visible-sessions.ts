// The order a person's own sessions show in, on the home page's cards and its launch buttons.
import type { Session, SessionList } from "../../../../common/api.ts";

/** A person's sessions, newest first. The BFF lists none that ended: they are history, nothing to act on. */
export function visibleSessions(list: SessionList | undefined): Session[] {
  return (list?.items ?? []).toSorted((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
}
