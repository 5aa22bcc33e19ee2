// Sessions the BFF cannot grade yet, or ever, through the emulator with real guests: a guest whose
// cloud-init has not reached runcmd (a real guest takes 30 to 120 s after Running), and an image
// without /usr/bin/python3. Both are "not gradable" with a reason the student can act on, never a
// failed check or a zero.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GradingRun, SelfCheck } from "../../common/grading-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { aCheck, aGradingLab } from "./testing/grading-fixtures.ts";
import { notListeningReasons } from "../agent/portforward-transport.ts";

/** How long each guest takes from Running to runcmd here: longer than the transport's retry. */
const toRuncmdMs = 8000;
const noPythonImage = "registry.example.org/labs/no-python:1";

const checks = [aCheck({ id: "home", selfCheck: true, run: "test -d ~" })];
const stockLab = aGradingLab(checks, { id: "stock-image", title: "Stock image" });
const noPythonLab = aGradingLab(checks, {
  id: "no-python",
  title: "No python",
  vm: { cpu: 1, memory: "512Mi", image: noPythonImage, nested: false, cloudInit: null },
});

let emulator: TestEmulator;
let bff: TestBff;

beforeAll(async () => {
  emulator = await startTestEmulator({
    guests: "sandbox",
    deployRbac: true,
    timings: { toRuncmd: { minMs: toRuncmdMs, maxMs: toRuncmdMs } },
    cluster: {
      images: [
        {
          image: noPythonImage,
          // A shell and systemd, but no python3: cloud-init itself is the emulator's.
          commands: ["sh", "bash", "test", "echo", "cat", "ls", "mkdir", "sleep", "systemctl", "journalctl"],
        },
      ],
    },
  });
  bff = await startTestBff({
    labs: [stockLab, noPythonLab],
    emulator,
    gradingLimits: { selfCheckIntervalMs: 500 },
  });
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("a session whose grading agent does not listen", () => {
  it("is 'still starting' while cloud-init has not started the agent, then grades", async () => {
    const alice = await bff.signIn("alice");
    const id = await launchRunning(alice, stockLab.id);
    const first = await alice.post(`/api/sessions/${id}/checks`);
    expect(first.status).toBe(201);
    expect(SelfCheck.parse(first.body).result).toMatchObject({
      gradable: false,
      score: null,
      checks: [],
      reason: "Your VM is still starting its grading agent. Try again in a minute.",
    });

    // An instructor's run at the same moment records it the same way, and finishes.
    const ivan = await bff.signIn("ivan");
    const started = await ivan.post(`/api/labs/${stockLab.id}/grading-runs`);
    expect(started.status).toBe(201);
    const finished = await eventually(
      () => ivan.get(`/api/grading-runs/${started.body.id}`),
      (answer) => answer.body?.status !== "running",
      { timeoutMs: 15_000, what: "the run to finish" },
    );
    const run = GradingRun.parse(finished.body);
    expect(run.status).toBe("completed");
    expect(run.items[0]?.result).toMatchObject({ gradable: false, reason: notListeningReasons.starting });

    // Once runcmd has run, the same session grades.
    const later = await eventually(
      () => alice.post(`/api/sessions/${id}/checks`),
      (answer) => answer.status === 201 && answer.body.result.gradable === true,
      { timeoutMs: 30_000, what: "the agent to answer" },
    );
    expect(SelfCheck.parse(later.body).result).toMatchObject({ gradable: true, score: 1 });
  }, 60_000);

  it("says an image without python3 cannot be graded, found in the boot log", async () => {
    const bob = await bff.signIn("bob");
    const id = await launchRunning(bob, noPythonLab.id);
    // cloud-init prints the marker on the serial console when it reaches runcmd.
    await eventually(
      () => bob.get(`/api/sessions/${id}/boot-log`),
      (answer) => (answer.body?.lines ?? []).some((line: string) => line.includes("lab-agent: not started:")),
      { timeoutMs: 30_000, what: "the marker in the boot log" },
    );
    const check = await bob.post(`/api/sessions/${id}/checks`);
    expect(check.status).toBe(201);
    expect(SelfCheck.parse(check.body).result).toMatchObject({
      gradable: false,
      score: null,
      reason:
        "This VM's image has no /usr/bin/python3, which the grading agent needs; ask the lab's author for an image that runs cloud-init.",
    });
  }, 60_000);
});
