// Names a request by its route, as the BFF's router does ("GET /api/sessions/:id"), so that the
// soak's figures group by route whatever the ids.
const patterns: [RegExp, string][] = [
  [/^\/api\/sessions\/[^/]+\/console$/, "/api/sessions/:id/console"],
  [/^\/api\/sessions\/[^/]+\/checks$/, "/api/sessions/:id/checks"],
  [/^\/api\/sessions\/[^/]+\/extend$/, "/api/sessions/:id/extend"],
  [/^\/api\/sessions\/[^/]+$/, "/api/sessions/:id"],
  [/^\/api\/grading-runs\/[^/]+\/rerun$/, "/api/grading-runs/:runId/rerun"],
  [/^\/api\/grading-runs\/[^/]+$/, "/api/grading-runs/:runId"],
  [/^\/api\/labs\/[^/]+\/grading-runs$/, "/api/labs/:labId/grading-runs"],
];

export function routeOf(method: string, url: string): string {
  const path = url.split("?")[0] ?? url;
  const match = patterns.find(([pattern]) => pattern.test(path));
  return `${method} ${match ? match[1] : path}`;
}
