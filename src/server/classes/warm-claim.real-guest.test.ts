// A warm VM on a real guest (Debian under QEMU, emulator/guests/qemu): the pool boots it for a
// class, a student's launch claims it, and a Restart boots the VM again from a fresh disk with the
// session's key in its user data. What the student sees in the serial console and what grading says
// are checked at each step. Two boots; the image is kept in .lab/real-guests between runs.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SelfCheck } from "../../common/grading-api.ts";
import { untilQemuGone } from "../../emulator/guests/qemu/testing/qemu-process.ts";
import {
  bootMs,
  Measurements,
  realGuestsStateDir,
  realGuestVm,
} from "../../emulator/guests/qemu/testing/real-guests.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { runningVmiUid, untilNewVmiRuns } from "./testing/session-vmi.ts";
import { scheduleReadyClass } from "./testing/warm-class.ts";

const lab = aGradingLab(
  [aCheck({ id: "hello-file", title: "Create ~/hello.txt", selfCheck: true, run: "test -f ~/hello.txt" })],
  {
    id: "warm-real-guest",
    vm: realGuestVm,
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
  },
);

// The class starts five minutes from now, on a clock that runs.
const classStart = Date.parse("2030-03-02T09:00:00.000Z");
const offsetMs = classStart - 5 * 60_000 - Date.now();

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let cookie: string;
let sessionId: string;
let serial: ConsoleTestClient | undefined;
const measured = new Measurements("warm VM on a real guest");

/** A self-check as the student asks for one; while the guest boots, again until its agent answers. */
async function gradableSelfCheck(): Promise<SelfCheck["result"]> {
  for (const started = Date.now(); ;) {
    const answer = await alice.post(`/api/sessions/${sessionId}/checks`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const { result } = SelfCheck.parse(answer.body);
    if (result.gradable) return result;
    // Anything but "still starting" is an answer: the agent refused the key, say.
    expect(result.reason, JSON.stringify(result)).toMatch(/starting/);
    if (Date.now() - started > bootMs) throw new Error(`no gradable self-check: ${JSON.stringify(result)}`);
    await sleep(2000);
  }
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "qemu", stateDir: realGuestsStateDir, deployRbac: true });
  bff = await startTestBff({
    labs: [lab],
    emulator,
    now: () => new Date(Date.now() + offsetMs),
    warmPool: { intervalMs: 1000 },
    gradingLimits: { selfCheckIntervalMs: 1 },
  });
  const ivan = await bff.signIn("ivan");
  const scheduled = Date.now();
  await scheduleReadyClass(
    ivan,
    {
      labId: lab.id,
      startsAt: new Date(classStart),
      endsAt: new Date(classStart + 2 * 3_600_000),
      expected: 1,
    },
    bootMs,
  );
  measured.since("class scheduled to warm VM ready", scheduled);
  alice = await bff.signIn("alice");
  cookie = await signInCookie(bff.url, "alice");
}, 900_000);

afterAll(async () => {
  measured.print();
  serial?.close();
  await bff?.close();
  await emulator?.close();
});

describe("a warm VM on a real guest", () => {
  it("is claimed by a student's launch, whose console shows the shell without a key pressed", async () => {
    const launched = Date.now();
    const answer = await alice.post("/api/sessions", { labId: lab.id });
    expect(answer.body).toMatchObject({ start: "warm", status: "running" });
    sessionId = answer.body.id;
    measured.since("launch to a claimed, running session", launched);

    serial = await ConsoleTestClient.connect(bff.url, sessionId, { cookie });
    await serial.untilLive(60_000);
    await serial.untilScreenShows(`student@${sessionId}:~$`, 60_000);
    measured.since("launch to the console's shell prompt", launched);
    expect(await serial.run("whoami; pwd")).toBe("student\n/home/student");
  });

  it("grades with the session's key", async () => {
    expect(await gradableSelfCheck()).toMatchObject({ score: 0, maxScore: 1 });
    await serial!.run("touch ~/hello.txt");
    expect(await gradableSelfCheck()).toMatchObject({ score: 1, maxScore: 1 });
  });

  it("restarts from a fresh disk, and grades with the session's key again", async () => {
    const before = await runningVmiUid(emulator, sessionId);
    const restarted = Date.now();
    expect((await alice.post(`/api/sessions/${sessionId}/restart`)).status).toBe(202);
    await untilNewVmiRuns(emulator, alice, sessionId, before, bootMs);
    // The console follows the new VMI by itself: the new boot's autologin shell shows in the same window.
    const promptsBefore = serial!.rowsContaining(`student@${sessionId}:~$`);
    await serial!.until(
      () => serial!.rowsContaining(`student@${sessionId}:~$`) > promptsBefore,
      "the new boot's shell prompt",
      bootMs,
    );
    measured.since("restart to the console's shell prompt", restarted);
    expect(await serial!.run("test -e ~/hello.txt && echo kept || echo fresh")).toBe("fresh");
    const check = await gradableSelfCheck();
    measured.since("restart to a gradable self-check", restarted);
    expect(check).toMatchObject({ score: 0, maxScore: 1 });
    expect(check.checks[0]).toMatchObject({ passed: false, outcome: { kind: "exit", code: 1 } });
  });

  it("ends QEMU when the session ends", async () => {
    const ended = Date.now();
    expect((await alice.delete(`/api/sessions/${sessionId}`)).status).toBeLessThan(300);
    await untilQemuGone(sessionId, 60_000);
    measured.since("session end to QEMU gone", ended);
  });
});
