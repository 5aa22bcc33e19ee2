// Time limits end to end: the BFF (under deploy/base's RBAC) against the emulator with fast timing,
// and a clock the test moves instead of waiting an hour.
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const lab = aLab({
  id: "linux-basics",
  title: "Linux basics",
  session: { minutes: 30, extendMinutes: 10, maxExtensions: 1, terminals: 0, consoles: ["serial"] },
});
const minute = 60_000;

let emulator: TestEmulator;
let bff: TestBff;
/** How far the BFF's clock is ahead of the real one. */
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator, now, reaperIntervalMs: 50 });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

async function launch(browser: TestBrowser) {
  const answer = await browser.post("/api/sessions", { labId: lab.id });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; expiresAt: string; extensions: number };
}

async function vmAnnotations(id: string, cluster = emulator): Promise<Record<string, string> | undefined> {
  const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    const vm = (await api.getNamespacedCustomObject({
      group: "kubevirt.io",
      version: "v1",
      namespace: testNamespace,
      plural: "virtualmachines",
      name: id,
    })) as { metadata: { annotations?: Record<string, string>; deletionTimestamp?: string } };
    return vm.metadata.deletionTimestamp ? undefined : (vm.metadata.annotations ?? {});
  } catch {
    return undefined;
  }
}

async function vmGoneOrGoing(id: string, cluster = emulator): Promise<boolean> {
  return (await vmAnnotations(id, cluster)) === undefined;
}

describe("extending a session", () => {
  it("adds the lab's minutes to the expiry on the VM, up to the lab's limit for students", async () => {
    const alice = await bff.signIn("alice");
    const session = await launch(alice);
    expect(Date.parse(session.expiresAt) - now().getTime()).toBeGreaterThan(29 * minute);

    const extended = await alice.post(`/api/sessions/${session.id}/extend`);
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    expect(extended.body.extensions).toBe(1);
    expect(Date.parse(extended.body.expiresAt) - Date.parse(session.expiresAt)).toBe(10 * minute);
    // Stored on the VM, not in the BFF: a restarted or second BFF sees the same expiry.
    expect(await vmAnnotations(session.id)).toMatchObject({
      "labconsole.dev/expires-at": extended.body.expiresAt,
      "labconsole.dev/extensions": "1",
    });

    const again = await alice.post(`/api/sessions/${session.id}/extend`);
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      code: "quota",
      message: "You have used the one extension this lab allows. Ask a TA if you need more time.",
      reason: "extensions_used_up",
      params: { count: 1 },
    });

    // A TA is not bound by the students' limit.
    const tara = await bff.signIn("tara");
    const byStaff = await tara.post(`/api/sessions/${session.id}/extend`);
    expect(byStaff.status).toBe(200);
    expect(byStaff.body.extensions).toBe(2);
    expect(Date.parse(byStaff.body.expiresAt) - Date.parse(session.expiresAt)).toBe(20 * minute);

    // Another student cannot even see it.
    const bob = await bff.signIn("bob");
    expect((await bob.post(`/api/sessions/${session.id}/extend`)).status).toBe(404);

    // A TA ends it, and the log says who did what.
    expect((await tara.delete(`/api/sessions/${session.id}`)).status).toBe(202);
    const ivan = await bff.signIn("ivan");
    const log = await ivan.get(`/api/audit?session=${session.id}`);
    expect(
      log.body.items.map((entry: { action: string; actor: string }) => `${entry.action} ${entry.actor}`),
    ).toEqual(["end tara", "extend tara", "extend alice", "launch alice"]);
    await eventually(() => vmGoneOrGoing(session.id), Boolean, { what: "the VM to go" });
  });

  it("extends once when a student double-clicks", async () => {
    const bob = await bff.signIn("bob");
    const session = await launch(bob);
    const clicks = await Promise.all([0, 1].map(() => bob.post(`/api/sessions/${session.id}/extend`)));
    expect(clicks.map((click) => click.status).sort()).toEqual([200, 409]);
    expect((await vmAnnotations(session.id))?.["labconsole.dev/extensions"]).toBe("1");
    await bob.delete(`/api/sessions/${session.id}`);
  });
});

describe("the reaper", () => {
  it("deletes a session's VM once its time is up, and records it", async () => {
    const alice = await bff.signIn("alice");
    const session = await launch(alice);
    clockOffsetMs += 29 * minute;
    // Something that must not happen: four passes of the 50 ms reaper with the clock short of the expiry.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await vmGoneOrGoing(session.id)).toBe(false);

    clockOffsetMs += 2 * minute;
    await eventually(() => vmGoneOrGoing(session.id), Boolean, { what: "the reaper to delete the VM" });
    const ivan = await bff.signIn("ivan");
    const log = await eventually(
      () => ivan.get(`/api/audit?session=${session.id}&action=end`),
      (answer) => answer.body.items.length === 1,
    );
    expect(log.body.items[0]).toMatchObject({
      actor: "system",
      actorRole: null,
      owner: "alice",
      details: { reason: "expired" },
    });
  });

  it("reaps sessions that expired while the BFF was down as soon as it is back", async () => {
    // A cluster of its own, so that no other BFF's reaper can be the one that deletes the VM.
    const cluster = await startTestEmulator({ deployRbac: true });
    let offsetMs = 0;
    const clock = () => new Date(Date.now() + offsetMs);
    try {
      const first = await startTestBff({ labs: [lab], emulator: cluster, now: clock });
      const session = await launch(await first.signIn("bob"));
      await first.close();
      // Down for longer than the session lasts; nobody asks anything of the new BFF, and its next
      // regular pass would come only after a minute.
      offsetMs += 31 * minute;
      const second = await startTestBff({
        labs: [lab],
        emulator: cluster,
        now: clock,
        reaperIntervalMs: 60_000,
      });
      try {
        await eventually(() => vmGoneOrGoing(session.id, cluster), Boolean, {
          what: "the VM that expired while the BFF was down to go",
        });
      } finally {
        await second.close();
      }
    } finally {
      await cluster.close();
    }
  });
});
