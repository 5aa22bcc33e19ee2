import type { GradingItemState, GradingRunStatus } from "../../../../common/grading-api.ts";

export const runStatusLabels: Record<GradingRunStatus, string> = {
  running: "Running",
  completed: "Completed",
  interrupted: "Interrupted",
};

export const itemStateLabels: Record<GradingItemState, string> = {
  pending: "Waiting",
  grading: "Grading…",
  done: "Done",
};
