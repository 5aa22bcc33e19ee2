// History compacted (410 Expired): the BFF's watch asks for changes after a resourceVersion the API
// server no longer keeps. It must list once more, and the list must leave neither a session that
// was deleted in the gap (a phantom) nor miss one created in it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { adminCluster, allSessions, createSessionVm } from "./testing/cluster-sessions.ts";
import { startWatchGate, type WatchGate } from "./testing/watch-gate.ts";

const lab = aLab();

let emulator: TestEmulator;
let gate: WatchGate;
let bff: TestBff;
let fresh: TestBff;
let staff: TestBrowser;
let freshStaff: TestBrowser;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  gate = await startWatchGate(emulator);
  // The BFF reaches the cluster through the gate; everything else about it is as usual.
  bff = await startTestBff({ labs: [lab], emulator: { ...emulator, bffKubeConfig: () => gate.kubeConfig } });
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
  await gate?.close();
  await emulator?.close();
});

const ids = (list: { items: { id: string }[] }) => list.items.map((item) => item.id).sort();

describe("a watch whose resourceVersion was compacted away (410)", () => {
  it("lists once more and shows exactly the sessions the cluster has", async () => {
    const cluster = adminCluster(emulator);
    const [doomed, kept] = await Promise.all(
      ["carol", "dan"].map((owner) => createSessionVm(cluster, lab, owner)),
    );
    await eventually(
      async () => ids(await allSessions(staff)),
      (seen) => seen.length === 2,
      { what: "both sessions in the BFF's view" },
    );
    // The BFF's watches end; it watches again (from where it was, or after a list when the watch
    // ended younger than a second: object-cache.ts), and its new watches wait at the gate.
    gate.hold();
    expect(emulator.emulator.faults.endWatches()).toBeGreaterThanOrEqual(2);
    await eventually(
      async () => gate.held,
      (held) => held === 2,
      { what: "both new watches held at the gate" },
    );

    // In the gap: one session is deleted for good, another created, and the history compacted.
    await cluster.deleteVirtualMachine(doomed!);
    const created = await createSessionVm(cluster, lab, "erin");
    await eventually(
      async () => ids(await allSessions(freshStaff)),
      (seen) => !seen.includes(doomed!) && seen.includes(created),
      { what: "the deletion to complete in the cluster" },
    );
    emulator.emulator.faults.compactHistory();
    const listsBefore = bff.kubeRequests.total("list");
    gate.release();

    await eventually(
      async () => ({ cached: await allSessions(staff), listed: await allSessions(freshStaff) }),
      ({ cached, listed }) => !cached.stale && JSON.stringify(cached.items) === JSON.stringify(listed.items),
      { what: "the cache to equal a fresh list" },
    );
    expect(ids(await allSessions(staff))).toEqual([created, kept].sort());
    // One list for each watch told 410: nothing else.
    expect(bff.kubeRequests.total("list")).toBe(listsBefore + 2);
    expect(bff.kubeRequests.snapshot().filter((entry) => entry.code !== 200 && entry.code !== 201)).toEqual(
      [],
    );
  });
});
