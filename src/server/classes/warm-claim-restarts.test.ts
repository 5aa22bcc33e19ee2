// A claimed warm VM over real sockets, through every way KubeVirt makes a new VMI for it: Lab
// Console's own Restart, the guest powering itself off (runStrategy Always boots it again), and a
// crash of the guest. Each new VMI boots from a fresh disk with what the user-data Secret holds
// (emulator: guests/guest-user-data.ts), so the session's key must be there, not the warm one the
// VM was booted with: a self-check grades after each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Lab } from "../../common/lab.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { runInConsole } from "../grading/testing/guest-console.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { runningVmiUid, untilNewVmiRuns } from "./testing/session-vmi.ts";
import { launchWarm, scheduleReadyClass } from "./testing/warm-class.ts";

// A root service of the lab's own watches for a file the student makes, then powers the VM off, as
// `sudo poweroff` would on a real image (the emulator's sandboxed student cannot become root).
const powerButton = "/home/student/power-off";
const lab: Lab = aLab({
  id: "warm-restarts",
  title: "Warm restarts",
  vm: {
    ...aLab().vm,
    cloudInit: `#cloud-config
runcmd:
  - [sh, -c, "nohup sh -c 'while [ ! -e ${powerButton} ]; do sleep 0.2; done; poweroff' >/dev/null 2>&1 &"]
`,
  },
  checks: [
    { id: "home", title: "Has a home", points: 1, run: "test -d ~", timeoutSeconds: 10, selfCheck: true },
  ],
});

// The class starts five minutes from now, on a clock that runs.
const start = Date.parse("2030-03-02T09:00:00.000Z");
const offsetMs = start - 5 * 60_000 - Date.now();

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let sessionId: string;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [lab],
    emulator,
    now: () => new Date(Date.now() + offsetMs),
    warmPool: { intervalMs: 100 },
    // A self-check again as soon as the new VMI's agent may be up.
    gradingLimits: { selfCheckIntervalMs: 1 },
  });
  const ivan = await bff.signIn("ivan");
  await scheduleReadyClass(ivan, {
    labId: lab.id,
    startsAt: new Date(start),
    endsAt: new Date(start + 2 * 3_600_000),
    expected: 1,
  });
  alice = await bff.signIn("alice");
  sessionId = await launchWarm(alice, lab.id);
}, 90_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

/** Waits for a new VMI to run in place of `before`, then checks the student's work on it. */
async function selfCheckOnNewVmi(before: string | undefined) {
  await untilNewVmiRuns(emulator, alice, sessionId, before, 60_000);
  const check = await eventually(
    () => alice.post(`/api/sessions/${sessionId}/checks`),
    (answer) =>
      answer.status !== 201 || answer.body.result.gradable || !/starting/.test(answer.body.result.reason),
    { timeoutMs: 30_000, what: "the agent of the new VMI up" },
  );
  expect(check.status).toBe(201);
  return check.body.result;
}

describe("a claimed warm VM", () => {
  it("grades with the session's key on the VMI it was claimed on", async () => {
    const check = await alice.post(`/api/sessions/${sessionId}/checks`);
    expect(check.body.result).toMatchObject({ gradable: true, score: 1 });
  });

  it("still does after a Restart", async () => {
    const before = await runningVmiUid(emulator, sessionId);
    expect((await alice.post(`/api/sessions/${sessionId}/restart`)).status).toBe(202);
    expect(await selfCheckOnNewVmi(before)).toMatchObject({ gradable: true, score: 1 });
  }, 120_000);

  it("still does after the guest powered itself off and KubeVirt booted it again", async () => {
    const before = await runningVmiUid(emulator, sessionId);
    const guest = { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: sessionId };
    await runInConsole(guest, `touch ${powerButton}`);
    expect(await selfCheckOnNewVmi(before)).toMatchObject({ gradable: true, score: 1 });
  }, 120_000);

  it("still does after its guest crashed", async () => {
    const before = await runningVmiUid(emulator, sessionId);
    expect(await emulator.emulator.faults.killGuest(testNamespace, sessionId)).toBe(true);
    expect(await selfCheckOnNewVmi(before)).toMatchObject({ gradable: true, score: 1 });
  }, 120_000);
});
