// Scheduled classes and their warm VMs over real sockets: an instructor schedules a class, the BFF's
// pool boots VMs in the emulator's sandboxed guests (the real agent inside), a student's launch claims
// one, the reserve is topped up, and the end of the class deletes what nobody claimed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduledClass } from "../../common/classes-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { createClusterClient } from "../kube/client.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { labelKeys } from "../sessions/labels.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const lab = aLab({
  id: "warm-lab",
  title: "Warm lab",
  checks: [
    { id: "home", title: "Has a home", points: 1, run: "test -d ~", timeoutSeconds: 10, selfCheck: true },
  ],
});
const coldLab = aLab({ id: "cold-lab", title: "Cold lab" });

const start = Date.parse("2030-03-02T09:00:00.000Z");
let clock = start - 5 * 60_000;

let emulator: TestEmulator;
let bff: TestBff;
let ivan: TestBrowser;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [lab, coldLab],
    emulator,
    now: () => new Date(clock),
    quotas: { perStudent: 2 },
    warmPool: { intervalMs: 100 },
  });
  ivan = await bff.signIn("ivan");
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

/** The warm VMs not on their way out, as the cluster's admin lists them. */
async function warmVms(classId?: string): Promise<string[]> {
  const admin = createClusterClient(emulator.kubeConfig, {
    namespace: testNamespace,
    labelSelector: classId === undefined ? labelKeys.warmFor : `${labelKeys.warmFor}=${classId}`,
    counter: new KubeRequestCounter(),
  });
  const { items } = await admin.virtualMachines.list();
  return items.filter((vm) => !vm.metadata.deletionTimestamp).map((vm) => vm.metadata.name ?? "");
}

async function classes(): Promise<ScheduledClass[]> {
  return (await ivan.get("/api/classes")).body.items;
}

async function poolOf(id: string): Promise<ScheduledClass["pool"]> {
  const found = (await classes()).find((each) => each.id === id);
  if (!found) throw new Error(`class ${id} is not listed`);
  return found.pool;
}

describe("a scheduled class's warm pool", () => {
  let classId: string;

  it("boots the expected students' VMs before the start, and marks them ready once their agent answers", async () => {
    const scheduled = await ivan.post("/api/classes", {
      labId: lab.id,
      startsAt: new Date(start).toISOString(),
      endsAt: new Date(start + 2 * 3_600_000).toISOString(),
      expected: 2,
    });
    expect(scheduled.status).toBe(201);
    classId = scheduled.body.id;
    expect(scheduled.body).toMatchObject({ labId: lab.id, expected: 2, target: 2, createdBy: "ivan" });

    const pool = await eventually(
      () => poolOf(classId),
      (counts) => counts.ready === 2,
      {
        timeoutMs: 60_000,
        what: "two warm VMs ready",
      },
    );
    expect(pool).toEqual({ ready: 2, booting: 0, claimed: 0 });
    // Nobody's sessions: not listed to staff, and not counted against anyone.
    expect((await ivan.get("/api/sessions")).body.total).toBe(0);
    const audit = await ivan.get("/api/audit?action=class-schedule");
    expect(audit.body.items[0]).toMatchObject({ actor: "ivan", labId: lab.id, details: { class: classId } });
  }, 90_000);

  it("gives a launch a booted VM that is the student's from the claim on, and tops the reserve up", async () => {
    const alice = await bff.signIn("alice");
    const clicked = clock;
    const launched = await alice.post("/api/sessions", { labId: lab.id });
    expect(launched.status).toBe(201);
    const session = launched.body;
    // A warm VM is in no section until the claim puts it in alice's.
    expect(session).toMatchObject({ owner: "alice", section: "a", start: "warm", status: "running" });
    // The session starts at the claim, not when the VM was booted.
    expect(Date.parse(session.createdAt)).toBe(clicked);
    expect(Date.parse(session.expiresAt)).toBe(clicked + lab.session.minutes * 60_000);
    expect(session.extensions).toBe(0);

    // The agent took the session's key: a self-check grades.
    const check = await alice.post(`/api/sessions/${session.id}/checks`);
    expect(check.status).toBe(201);
    expect(check.body.result).toMatchObject({ gradable: true, score: 1 });

    // The console is a prompt at once, and nothing was recorded before the claim.
    const console = await ConsoleTestClient.connect(bff.url, session.id, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    await console.untilLive(20_000);
    console.type("echo claimed''-ok\r");
    await console.untilScreenShows("claimed-ok", 20_000);
    console.close();

    const audit = await ivan.get("/api/audit?action=launch");
    expect(audit.body.items[0]).toMatchObject({
      actor: "alice",
      sessionId: session.id,
      details: { start: "warm" },
    });

    const pool = await eventually(
      () => poolOf(classId),
      (counts) => counts.claimed === 1 && counts.ready === 2,
      {
        timeoutMs: 60_000,
        what: "the reserve topped up to two",
      },
    );
    expect(pool).toEqual({ ready: 2, booting: 0, claimed: 1 });
  }, 120_000);

  it("launches cold where no class has a VM waiting, and says so", async () => {
    const alice = await bff.signIn("alice");
    const launched = await alice.post("/api/sessions", { labId: coldLab.id });
    expect(launched.status).toBe(201);
    expect(launched.body.start).toBe("cold");
  });

  it("deletes the unclaimed VMs when the class ends; claimed sessions go on", async () => {
    clock = start + 2 * 3_600_000 + 1;
    await eventually(
      () => warmVms(),
      (names) => names.length === 0,
      {
        timeoutMs: 30_000,
        what: "the warm VMs deleted",
      },
    );
    const sessions = (await ivan.get("/api/sessions")).body.items;
    expect(sessions.filter((each: { labId: string }) => each.labId === lab.id)).toHaveLength(1);
    expect(await classes()).toEqual([]);
  }, 60_000);
});

describe("scheduling", () => {
  it("is for instructors; TAs see the schedule", async () => {
    const tara = await bff.signIn("tara");
    const body = {
      labId: lab.id,
      startsAt: new Date(clock + 3_600_000).toISOString(),
      endsAt: new Date(clock + 7_200_000).toISOString(),
      expected: 10,
    };
    expect((await tara.post("/api/classes", body)).status).toBe(403);
    expect((await tara.get("/api/classes")).status).toBe(200);
    expect((await (await bff.signIn("alice")).get("/api/classes")).status).toBe(403);
  });

  it("refuses a class that ends before it starts, lasts too long, is over, or names no lab", async () => {
    const at = (minutes: number) => new Date(clock + minutes * 60_000).toISOString();
    const refusals = await Promise.all([
      ivan.post("/api/classes", { labId: lab.id, startsAt: at(60), endsAt: at(30), expected: 5 }),
      ivan.post("/api/classes", { labId: lab.id, startsAt: at(60), endsAt: at(60 + 13 * 60), expected: 5 }),
      ivan.post("/api/classes", { labId: lab.id, startsAt: at(-120), endsAt: at(-60), expected: 5 }),
      ivan.post("/api/classes", { labId: "no-such-lab", startsAt: at(60), endsAt: at(90), expected: 5 }),
      ivan.post("/api/classes", { labId: lab.id, startsAt: at(60), endsAt: at(90), expected: 0 }),
    ]);
    expect(refusals.map((answer) => [answer.status, answer.body.error.reason])).toEqual([
      [400, "class_ends_before_start"],
      [400, "class_too_long"],
      [400, "class_in_past"],
      [404, "lab_not_found"],
      [400, undefined],
    ]);
  });

  it("cancels a class: its unclaimed VMs go", async () => {
    const scheduled = await ivan.post("/api/classes", {
      labId: lab.id,
      startsAt: new Date(clock + 60_000).toISOString(),
      endsAt: new Date(clock + 3_600_000).toISOString(),
      expected: 1,
    });
    const id = scheduled.body.id;
    await eventually(
      () => poolOf(id),
      (counts) => counts.booting + counts.ready > 0,
      {
        timeoutMs: 30_000,
        what: "a warm VM for the class",
      },
    );
    expect((await ivan.delete(`/api/classes/${id}`)).status).toBe(204);
    await eventually(
      () => warmVms(id),
      (names) => names.length === 0,
      {
        timeoutMs: 30_000,
        what: "the cancelled class's VMs deleted",
      },
    );
    expect((await ivan.delete(`/api/classes/${id}`)).status).toBe(404);
  }, 60_000);
});
