// The LTI feature's query keys, general to specific: invalidating ["lti", "courses"] refreshes the
// course list and every roster, as a roster sync changes both.
import type { LtiScoreFilters } from "./get-scores.ts";

export const ltiKeys = {
  all: ["lti"] as const,
  platforms: () => [...ltiKeys.all, "platforms"] as const,
  courses: () => [...ltiKeys.all, "courses"] as const,
  roster: (courseId: string) => [...ltiKeys.courses(), "roster", courseId] as const,
  scores: () => [...ltiKeys.all, "scores"] as const,
  scoreList: (filters: LtiScoreFilters) => [...ltiKeys.scores(), "list", filters] as const,
  deepLink: (requestId: string) => [...ltiKeys.all, "deep-link", requestId] as const,
};
