import type { LtiScore } from "../../../../common/lti-api.ts";

/**
 * in-gradebook: of a student's scores for one lab in one course, the one the LMS shows now.
 * replaced: a score a newer one of the same student, lab and course takes the place of.
 */
export type GradebookStanding = "in-gradebook" | "replaced";

type Scored = Pick<LtiScore, "id" | "student" | "labId" | "courseId" | "gradedAt" | "state" | "postedAt">;

/**
 * Where each score stands beside the others of its student, lab and course, among the scores given
 * (the rows on screen). The LMS keeps the score with the latest timestamp, which is its gradedAt
 * (LTI AGS), so the newest posted one is in the gradebook; a newer one on its way or refused does not
 * change that until it is posted. Every other score graded before a newer one is replaced. A score
 * alone in its group gets no standing: its state says it all.
 */
export function gradebookStandings(scores: readonly Scored[]): Map<string, GradebookStanding> {
  const groups = new Map<string, Scored[]>();
  for (const score of scores) {
    const key = JSON.stringify([score.student, score.labId, score.courseId]);
    groups.set(key, [...(groups.get(key) ?? []), score]);
  }
  const standings = new Map<string, GradebookStanding>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const newest = Math.max(...group.map(gradedTime));
    const shown = group
      .filter((score) => score.state === "posted")
      .reduce<Scored | undefined>((best, score) => (!best || isLater(score, best) ? score : best), undefined);
    for (const score of group) {
      if (score === shown) standings.set(score.id, "in-gradebook");
      else if (gradedTime(score) < newest) standings.set(score.id, "replaced");
    }
  }
  return standings;
}

const gradedTime = (score: Scored) => Date.parse(score.gradedAt);

/** Graded later; of two graded at the same time, the one posted last is the one the LMS kept. */
function isLater(score: Scored, than: Scored): boolean {
  const graded = gradedTime(score) - gradedTime(than);
  if (graded !== 0) return graded > 0;
  return Date.parse(score.postedAt ?? "") > Date.parse(than.postedAt ?? "");
}
