// Test helper: an instructor schedules a class of `expected` students, and the pool's VMs for it are
// booted and ready (their agents answer) before the test goes on.
import { eventually } from "../../../common/testing/patience.ts";
import type { TestBrowser } from "../../testing/test-bff.ts";

export async function scheduleReadyClass(
  instructor: TestBrowser,
  class_: { labId: string; startsAt: Date; endsAt: Date; expected: number },
  bootMs = 60_000,
): Promise<string> {
  const scheduled = await instructor.post("/api/classes", {
    labId: class_.labId,
    startsAt: class_.startsAt.toISOString(),
    endsAt: class_.endsAt.toISOString(),
    expected: class_.expected,
  });
  if (scheduled.status !== 201) throw new Error(`scheduling answered ${scheduled.status}`);
  const id: string = scheduled.body.id;
  await eventually(
    async () =>
      ((await instructor.get("/api/classes")).body.items as { id: string; pool: { ready: number } }[]).find(
        (each) => each.id === id,
      )?.pool.ready,
    (ready) => ready === class_.expected,
    { timeoutMs: bootMs, what: `${class_.expected} warm VM(s) ready` },
  );
  return id;
}

/** A student's launch that claims a warm VM (it fails otherwise); the session's id. */
export async function launchWarm(student: TestBrowser, labId: string): Promise<string> {
  const launched = await student.post("/api/sessions", { labId });
  if (launched.body?.start !== "warm" || launched.body?.status !== "running") {
    throw new Error(
      `the launch did not claim a running warm VM: ${launched.status} ${JSON.stringify(launched.body)}`,
    );
  }
  return launched.body.id as string;
}
