// Small builders of the LTI API's shapes for tests, each with overrides.
import type { LtiScore, LtiScoreList } from "../../../../common/lti-api.ts";

export function buildScore(overrides: Partial<LtiScore> = {}): LtiScore {
  return {
    id: "score-1",
    labId: "linux-basics",
    student: "alice@example.edu",
    courseId: "course-1",
    courseTitle: "Operating Systems 101",
    platformName: "Moodle",
    source: "run",
    scoreGiven: 8,
    scoreMaximum: 10,
    gradedAt: "2026-03-01T10:00:00.000Z",
    state: "posted",
    attempts: 1,
    lastError: null,
    nextAttemptAt: null,
    postedAt: "2026-03-01T10:00:05.000Z",
    ...overrides,
  };
}

export function buildScoreList(
  items: LtiScore[],
  counts: Partial<LtiScoreList["counts"]> = {},
): LtiScoreList {
  const counted = (state: LtiScore["state"]) => items.filter((score) => score.state === state).length;
  return {
    items,
    counts: {
      pending: counted("pending"),
      posted: counted("posted"),
      refused: counted("refused"),
      ...counts,
    },
  };
}
