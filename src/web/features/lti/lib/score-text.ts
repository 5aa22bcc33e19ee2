import type { LtiScore } from "../../../../common/lti-api.ts";

/** "8 / 10", the way the grading page writes a score, with the numbers in the reader's locale. */
export function formatScore(
  score: Pick<LtiScore, "scoreGiven" | "scoreMaximum">,
  number: (value: number) => string,
) {
  return `${number(score.scoreGiven)} / ${number(score.scoreMaximum)}`;
}

/** What to say beside a score's state: when it was posted, when the next try is, or neither. */
export type ScoreProgress =
  | { kind: "posted"; at: string | null }
  | { kind: "next-attempt"; at: string }
  | { kind: "queued" }
  | { kind: "refused" };

export function scoreProgress(score: Pick<LtiScore, "state" | "postedAt" | "nextAttemptAt">): ScoreProgress {
  switch (score.state) {
    case "posted":
      return { kind: "posted", at: score.postedAt };
    case "pending":
      return score.nextAttemptAt ? { kind: "next-attempt", at: score.nextAttemptAt } : { kind: "queued" };
    case "refused":
      return { kind: "refused" };
  }
}
