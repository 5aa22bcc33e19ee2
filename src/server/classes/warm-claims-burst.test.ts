// Launches that all arrive at once on a class's warm pool: each warm VM goes to exactly one student,
// the rest start cold, and nobody gets two sessions. Real emulator with sandboxed guests (the agent in
// each), the BFF's own client and pool.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../common/api.ts";
import type { ScheduledClass } from "../../common/classes-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { manyStudents } from "../testing/many-students.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const lab = aLab({ id: "rush-lab", title: "Rush lab" });
const warmCount = 4;
const launchCount = 8;

let emulator: TestEmulator;
let bff: TestBff;
let students: string[];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  const signIns = await manyStudents(launchCount);
  students = signIns.students;
  bff = await startTestBff({
    labs: [lab],
    emulator,
    authenticator: signIns.authenticator,
    // One pass only fills the pool: the rush meets exactly the VMs booted for it.
    warmPool: { intervalMs: 200 },
  });
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("a rush on a warm pool", () => {
  it("hands each warm VM to one student; the others start cold; nobody gets two", async () => {
    const ivan = await bff.signIn("ivan");
    const scheduled = await ivan.post("/api/classes", {
      labId: lab.id,
      startsAt: new Date(Date.now() + 60_000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      expected: warmCount,
    });
    expect(scheduled.status).toBe(201);
    const readyNames = await eventually(
      async () => ((await ivan.get("/api/classes")).body.items as ScheduledClass[])[0]?.pool.ready ?? 0,
      (ready) => ready === warmCount,
      { timeoutMs: 60_000, what: `${warmCount} warm VMs ready` },
    );
    expect(readyNames).toBe(warmCount);

    const browsers: TestBrowser[] = await Promise.all(students.map((name) => bff.signIn(name)));
    const answers = await Promise.all(
      browsers.map((browser) => browser.post("/api/sessions", { labId: lab.id })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(students.map(() => 201));
    const sessions = answers.map((answer) => answer.body as Session);

    const warm = sessions.filter((session) => session.start === "warm");
    // The pool may have readied a top-up VM during the rush; never fewer than it had.
    expect(warm.length).toBeGreaterThanOrEqual(warmCount);
    expect(new Set(sessions.map((session) => session.id)).size).toBe(launchCount);
    expect(sessions.map((session) => session.owner).sort()).toEqual([...students].sort());
    const listed = (await ivan.get(`/api/sessions?lab=${lab.id}`)).body;
    expect(listed.total).toBe(launchCount);
  }, 120_000);
});
