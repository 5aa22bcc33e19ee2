// Idle sessions end to end: sessions launched through the BFF on an emulator with real guests and
// deploy/base's RBAC, a clock the test moves, the idle pass every 200 ms. The warning shows on the
// session and in the console's status; a key in the console (through the hub) and CPU work the
// agent sees both reset it; at the limit the session ends, or its VM is paused through KubeVirt's
// pause subresource and resumed by the student through unpause. Every end, pause and resume is audited.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { runInConsole } from "../grading/testing/guest-console.ts";
import { annotationKeys } from "../sessions/labels.ts";
import { eventually, patient } from "../../common/testing/patience.ts";
import {
  launchRunning,
  startTestBff,
  testNamespace,
  type TestBff,
  type TestBrowser,
} from "../testing/test-bff.ts";

const minute = 60_000;
function idleLab(id: string, action: "end" | "pause"): Lab {
  const alive = aCheck({ id: "alive", selfCheck: true, run: "true" });
  return aGradingLab([alive], {
    id,
    session: {
      // A day, so that the test's clock never reaches the expiry.
      minutes: 1440,
      extendMinutes: 15,
      maxExtensions: 2,
      terminals: 0,
      consoles: ["serial"],
      idle: { minutes: 20, warnMinutes: 5, action },
    },
  });
}
const endLab = idleLab("idle-end", "end");
const pauseLab = idleLab("idle-pause", "pause");

let emulator: TestEmulator;
let bff: TestBff;
let offsetMs = 0;
const now = () => new Date(Date.now() + offsetMs);

async function sessionOf(browser: TestBrowser, id: string) {
  const answer = await browser.get(`/api/sessions/${id}`);
  return { status: answer.status, session: answer.body as Session };
}

async function vmOf(id: string) {
  const path = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${id}`;
  return (await jsonRequest(emulator.emulator, "GET", path)).json as {
    metadata: { annotations?: Record<string, string> };
  };
}

async function vmiPaused(id: string): Promise<boolean> {
  const path = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachineinstances/${id}`;
  const vmi = (await jsonRequest(emulator.emulator, "GET", path)).json as {
    status?: { conditions?: { type: string; status: string }[] };
  };
  return vmi.status?.conditions?.some((c) => c.type === "Paused" && c.status === "True") ?? false;
}

/** When the session last showed activity, as the idle pass counts it: its start or its last-active mark. */
async function quietSince(browser: TestBrowser, id: string): Promise<number> {
  const { session } = await sessionOf(browser, id);
  const lastActive = (await vmOf(id)).metadata.annotations?.[annotationKeys.lastActive];
  return Math.max(Date.parse(session.createdAt), lastActive ? Date.parse(lastActive) : 0);
}

/**
 * Moves the clock `minutes` past the session's last activity and waits until `reached`. On a busy
 * machine the guest's shell may still be working when the clock moves (starting up, or answering a
 * key), and the agent rightly counts its CPU as activity, which moves the limit on: the clock then
 * follows it, as a quiet student's would.
 */
async function quietFor(
  browser: TestBrowser,
  id: string,
  minutes: number,
  reached: (seen: { status: number; session: Session }) => boolean,
  what: string,
) {
  for (let attempt = 1; ; attempt += 1) {
    const since = await quietSince(browser, id);
    offsetMs = since + minutes * minute - Date.now();
    const seen = await eventually(
      async () => {
        const answer = await sessionOf(browser, id);
        return answer.status === 404
          ? { ...answer, since }
          : { ...answer, since: await quietSince(browser, id) };
      },
      (answer) => reached(answer) || answer.since > since,
      // A pass waits up to 10 s for an agent that does not answer: give it two.
      { what: `${what}, or activity that moves the limit on`, timeoutMs: 20_000 },
    );
    if (reached(seen)) return { session: seen.session, quietSince: seen.since };
    if (attempt === 3) throw new Error(`never ${what}: the agent kept seeing activity`);
  }
}

const warned = ({ session }: { session: Session }) => session.idle?.state === "warning";

async function auditOf(action: string, id: string) {
  const ivan = await bff.signIn("ivan");
  const answer = await ivan.get(`/api/audit?action=${action}&session=${id}`);
  return (answer.body as { items: { actor: string; details: Record<string, unknown> }[] }).items;
}

beforeAll(async () => {
  // virt-handler shows a pause or unpause on the VMI a second after virt-api said yes: five passes.
  emulator = await startTestEmulator({
    guests: "sandbox",
    deployRbac: true,
    timings: { toPausedCondition: 1_000 },
  });
  bff = await startTestBff({
    labs: [endLab, pauseLab],
    emulator,
    now,
    idleTiming: { passIntervalMs: 200, activeCpuSeconds: 0.1 },
  });
}, 30_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("an idle session", () => {
  it("is warned on the page and in the console, a key resets it, and at the limit it ends", async () => {
    const alice = await bff.signIn("alice");
    const id = await launchRunning(alice, endLab.id);
    const console = await ConsoleTestClient.connect(bff.url, id, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    await console.untilLive();

    const first = await quietFor(alice, id, 16, warned, "warned");
    expect(first.session.idle).toEqual({
      state: "warning",
      action: "end",
      endsAt: new Date(first.quietSince + 20 * minute).toISOString(),
    });
    await console.until(
      () => console.lastMessage("status")?.notice?.reason === "idle_warning",
      "the console's idle notice",
    );

    // A key through the console: the warning goes at once, and the limit starts again from now.
    console.type("\r");
    await eventually(
      () => sessionOf(alice, id),
      ({ session }) => session.idle === undefined,
      { what: "the warning to clear" },
    );
    await console.until(() => !console.lastMessage("status")?.notice, "the console's notice to clear");
    const typedAt = Date.parse((await vmOf(id)).metadata.annotations?.[annotationKeys.lastActive] ?? "");
    // Recorded when the key arrived, which is no longer ago than this test took since (on a busy
    // machine, seconds).
    expect(typedAt).toBeGreaterThanOrEqual(Date.now() + 16 * minute - patient(5000));

    const second = await quietFor(alice, id, 16, warned, "warned again");
    expect(second.quietSince).toBeGreaterThanOrEqual(typedAt);
    expect(second.session.idle?.endsAt).toBe(new Date(second.quietSince + 20 * minute).toISOString());
    await quietFor(
      alice,
      id,
      21,
      ({ status, session }) => status === 404 || session.status === "stopping",
      "ended",
    );
    await console.untilClosed();
    const [ended] = await auditOf("end", id);
    expect(ended).toMatchObject({ actor: "system", details: { reason: "idle", idleMinutes: 20 } });
    console.close();
  }, 120_000);

  it("stays active while its processes work, then pauses, and its student resumes it", async () => {
    offsetMs = 0;
    const bob = await bff.signIn("bob");
    const id = await launchRunning(bob, pauseLab.id);
    const guest = { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: id };
    // Through the cluster's console, not the BFF's: no console input the hub could count.
    await runInConsole(guest, "sh -c 'while :; do :; done' & echo $! > /tmp/burner.pid", 20_000);

    // The agent sees the CPU time grow, so the pass keeps moving last-active on with the clock.
    offsetMs = 16 * minute;
    await eventually(
      () => vmOf(id),
      (vm) =>
        Date.parse(vm.metadata.annotations?.[annotationKeys.lastActive] ?? "") >=
        Date.now() + 16 * minute - 5000,
      { what: "the agent's activity to be recorded", timeoutMs: 20_000 },
    );
    expect((await sessionOf(bob, id)).session.idle).toBeUndefined();

    await runInConsole(guest, "kill $(cat /tmp/burner.pid)");
    // The pass may see the burner's last CPU once more and move last-active on; then it is quiet.
    let paused: Session | undefined;
    for (let attempt = 0; attempt < 3 && !paused; attempt++) {
      offsetMs += 21 * minute;
      const seen = await eventually(
        async () => ({ ...(await sessionOf(bob, id)), vm: await vmOf(id) }),
        ({ session, vm }) =>
          session.idle?.state === "paused" ||
          Date.parse(vm.metadata.annotations?.[annotationKeys.lastActive] ?? "") >= now().getTime() - 5000,
        { what: "a pause, or activity once more", timeoutMs: 20_000 },
      );
      if (seen.session.idle?.state === "paused") paused = seen.session;
    }
    expect(paused?.idle).toMatchObject({ state: "paused", action: "pause" });
    await eventually(
      () => vmiPaused(id),
      (yes) => yes,
      { what: "the VMI's Paused condition" },
    );
    await eventually(
      () => sessionOf(bob, id),
      ({ session }) => session.notice?.reason === "paused" && session.status === "running",
      { what: "the session to show it is paused" },
    );
    expect(await auditOf("idle-pause", id)).toHaveLength(1);

    // Only the session's people may resume it; another student is told it does not exist.
    const carol = await bff.signIn("carol");
    expect((await carol.post(`/api/sessions/${id}/resume`)).status).toBe(404);
    const resumed = await bob.post(`/api/sessions/${id}/resume`);
    expect(resumed.status).toBe(202);
    // At once, while the VMI still shows the pause: the agent is reached as soon as virt-api lets it.
    const check = await bob.post(`/api/sessions/${id}/checks`);
    expect(check.status).toBe(201);
    expect(check.body.result).toMatchObject({ gradable: true, score: 1 });
    await eventually(
      () => vmiPaused(id),
      (yes) => !yes,
      { what: "the VMI to run again" },
    );
    await eventually(
      () => sessionOf(bob, id),
      ({ session }) => session.idle === undefined && session.notice === null,
      { what: "the session to run again" },
    );
    expect(await runInConsole(guest, "echo back-$((6*7))")).toContain("back-42");
    const again = await bob.post(`/api/sessions/${id}/resume`);
    expect(again.status).toBe(409);
    expect((again.body as { error: { reason: string } }).error.reason).toBe("resume_not_paused");
    const [entry] = await auditOf("idle-resume", id);
    expect(entry).toMatchObject({ actor: "bob" });
  }, 120_000);
});
