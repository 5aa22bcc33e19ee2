// The API server drops every connection and refuses new ones for 20 s in the middle of the BFF's
// watches. Meanwhile the BFF serves its last view, marked stale, and retries with backoff; within
// 10 s of the API server's return its cache equals a fresh list, changes made at that moment included.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { adminCluster, allSessions, createSessionVm } from "./testing/cluster-sessions.ts";

const lab = aLab();
const outageMs = 20_000;

let emulator: TestEmulator;
let bff: TestBff;
/** Lists from the cluster on every request: what a fresh list says. */
let fresh: TestBff;
let staff: TestBrowser;
let freshStaff: TestBrowser;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator });
  fresh = await startTestBff({ labs: [lab], emulator, sessionsReadMode: "direct" });
  [staff, freshStaff] = await Promise.all([bff.signIn("tara"), fresh.signIn("tara")]);
  await eventually(
    () => staff.get("/api/readyz"),
    (answer) => answer.status === 200,
    { what: "the BFF's cache to load" },
  );
});

afterAll(async () => {
  await bff?.close();
  await fresh?.close();
  await emulator?.close();
});

async function clusterAnswers(): Promise<boolean> {
  return rawRequest(emulator.emulator, "GET", "/version").then(
    (answer) => answer.status === 200,
    () => false,
  );
}

/** True when the BFF's cached view is the cluster's, item for item. */
async function matchesFreshList(): Promise<boolean> {
  const [cached, listed] = await Promise.all([allSessions(staff), allSessions(freshStaff)]);
  return !cached.stale && JSON.stringify(cached.items) === JSON.stringify(listed.items);
}

function listAttemptsFailed(): number {
  return bff.kubeRequests
    .snapshot()
    .filter((entry) => entry.verb === "list" && entry.code === "error")
    .reduce((sum, entry) => sum + entry.count, 0);
}

describe("the API server down for 20 s mid-watch", () => {
  it("serves the last view marked stale, retries with backoff, and is current within 10 s of recovery", async () => {
    const cluster = adminCluster(emulator);
    const [carol] = await Promise.all(
      ["carol", "dan", "erin"].map((owner) => createSessionVm(cluster, lab, owner)),
    );
    await eventually(
      async () => (await allSessions(staff)).items,
      (items) =>
        items.length === 3 && items.every((item) => (item as { status?: string }).status === "running"),
      { what: "three running sessions in the BFF's view" },
    );
    await eventually(matchesFreshList, Boolean, { what: "the cache to match a fresh list" });
    const before = await allSessions(staff);
    const failedBefore = listAttemptsFailed();

    const droppedAt = Date.now();
    expect(emulator.emulator.faults.dropConnections({ forMs: outageMs })).toBeGreaterThan(0);

    // While it is down: the same sessions, marked stale; readyz says why it is not ready.
    let samples = 0;
    while (!(await clusterAnswers())) {
      const during = await allSessions(staff);
      expect(during.items).toEqual(before.items);
      if (Date.now() - droppedAt > 1000) {
        expect(during.stale).toBe(true);
        const readyz = await staff.get("/api/readyz");
        expect(readyz.status).toBe(503);
        expect(readyz.body.error.message).toBe("Lost the watch on the cluster; reconnecting.");
      }
      samples += 1;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const upAt = Date.now();
    expect(upAt - droppedAt).toBeGreaterThanOrEqual(outageMs - 100);
    // A read every quarter second or so, slower on a busy machine: many reads, all of them stale.
    expect(samples).toBeGreaterThan(10);
    // Backoff: both caches kept trying, but a few times a second at most, not in a tight loop.
    const failedLists = listAttemptsFailed() - failedBefore;
    expect(failedLists).toBeGreaterThanOrEqual(4);
    expect(failedLists).toBeLessThanOrEqual(30);

    // The moment it is back, a student launches and an administrator deletes a session by hand.
    const alice = await bff.signIn("alice");
    const launched = await alice.post("/api/sessions", { labId: lab.id });
    expect(launched.status).toBe(201);
    await cluster.deleteVirtualMachine(carol!);

    await eventually(
      async () => (await matchesFreshList()) && (await allSessions(staff)).items.map((item) => item.id),
      (ids) => ids !== false && ids.includes(launched.body.id) && !ids.includes(carol!),
      {
        timeoutMs: 10_000 - (Date.now() - upAt),
        what: "the cache to match a fresh list, with both changes, within 10 s of recovery",
      },
    );
    const recoveredMs = Date.now() - upAt;
    console.info(
      `[proof] API server down ${outageMs} ms: ${samples} stale reads served, ${failedLists} failed lists, cache current ${recoveredMs} ms after recovery`,
    );
  });
});
