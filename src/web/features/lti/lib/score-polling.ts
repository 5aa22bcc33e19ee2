import type { LtiScoreList } from "../../../../common/lti-api.ts";

// Polling follows the outbox: while a score waits to be posted the page looks every few seconds, so
// "posted" or the LMS's refusal shows soon after it happens; otherwise slowly, for the scores a
// grading run in another tab adds.
export const pendingPollMs = 3000;
export const settledPollMs = 30_000;

/** The counts cover every state whatever the filter, so a page showing only refused scores still follows pending ones. */
export function scoreListPollMs(list: LtiScoreList | undefined): number {
  if (!list) return settledPollMs;
  return list.counts.pending > 0 || list.items.some((score) => score.state === "pending")
    ? pendingPollMs
    : settledPollMs;
}
