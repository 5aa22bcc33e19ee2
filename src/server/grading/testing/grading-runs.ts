// Test helper: an instructor's grading run, waited for until it is no longer running.
import { GradingRun } from "../../../common/grading-api.ts";
import { eventually } from "../../../common/testing/patience.ts";
import type { TestBrowser } from "../../testing/test-bff.ts";

/** The run once it has finished (completed or otherwise), as `browser` reads it. */
export async function finishedGradingRun(
  browser: TestBrowser,
  runId: string,
  timeoutMs = 20_000,
): Promise<GradingRun> {
  const answer = await eventually(
    () => browser.get(`/api/grading-runs/${runId}`),
    (each) => each.body?.status !== undefined && each.body.status !== "running",
    { timeoutMs, what: `grading run ${runId} to finish` },
  );
  return GradingRun.parse(answer.body);
}
