// General to specific: invalidating ["grading", "runs"] refreshes every run list and run at once.
export const gradingKeys = {
  all: ["grading"] as const,
  selfChecks: (sessionId: string) => [...gradingKeys.all, "self-checks", sessionId] as const,
  runs: () => [...gradingKeys.all, "runs"] as const,
  runList: (labId: string) => [...gradingKeys.runs(), "list", labId] as const,
  run: (runId: string) => [...gradingKeys.runs(), "detail", runId] as const,
};
