import type { Session, SessionList } from "../../../../common/api.ts";

// Polling follows the data: fast while a VM changes state, so the timeline moves in step with the
// cluster; slow when everything is stable. A session that is gone answers 404, and its query stops
// polling on that (get-session.ts).

export const changingPollMs = 1500;
// Each tab gets its own slow period (9-11 s), so a class that opened the page together drifts apart
// instead of hitting the BFF in the same second every ten seconds.
export const stablePollMs = 9000 + Math.round(Math.random() * 2000);

// While the student's raised hand waits, the answer must show at once: the TA may be typing "look
// at the console" while they talk. Conditional requests keep each poll to a 304 from the BFF's cache.
export const waitingHandPollMs = 750;

export function isChanging(status: Session["status"]): boolean {
  return status === "starting" || status === "stopping";
}

export function sessionListPollMs(list: SessionList | undefined): number {
  if (!list) return stablePollMs;
  const changing = list.counts.starting + list.counts.stopping;
  return changing > 0 || list.items.some((session) => isChanging(session.status))
    ? changingPollMs
    : stablePollMs;
}

export function sessionPollMs(session: Session | undefined): number {
  if (!session) return stablePollMs;
  if (session.help && session.help.acknowledgedBy === null) return waitingHandPollMs;
  return isChanging(session.status) ? changingPollMs : stablePollMs;
}
