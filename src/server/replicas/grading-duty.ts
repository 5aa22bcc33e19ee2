// The grading worker's part: one replica grades every run (so the concurrency limit holds for the
// whole console, and no run is graded twice). On taking the grading lease it picks up the runs left
// running, by a replica that died or started on another replica, and keeps looking for new ones;
// on losing the lease it stands down and the items it was grading stay pending for the next worker.
import type { GradingService } from "../grading/service.ts";
import type { DutyWork } from "./coordination.ts";
import type { CoordinationLog } from "./log.ts";

export const gradingLeaseName = "lab-console-grading";

export function gradingWork(
  grading: Pick<GradingService, "resumeRuns" | "standDown">,
  options: {
    /** How often the worker looks for runs other replicas started; undefined: once, at the start. */
    pollMs: number | undefined;
    log: CoordinationLog;
  },
): DutyWork {
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> | undefined;
  const lookForRuns = () => {
    // resumeRuns skips the runs already being graded here; one look at a time is enough.
    looking ??= grading
      .resumeRuns()
      .catch((error: unknown) => options.log.warn({ err: error }, "picking up grading runs failed"))
      .finally(() => {
        looking = undefined;
      });
  };
  return {
    start() {
      lookForRuns();
      if (options.pollMs !== undefined) timer = setInterval(lookForRuns, options.pollMs);
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await looking;
      await grading.standDown();
    },
  };
}
