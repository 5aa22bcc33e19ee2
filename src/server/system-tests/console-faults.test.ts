// The console under failure: the BFF's connection to the VM's console cut in the middle of a
// session, then the VM restarted. Viewers come through both and reconnect, and nothing they are
// shown, live or replayed, holds a line of output twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";

const lab = aLab();

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;
const cookies: Record<string, string> = {};
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [lab],
    emulator,
    consoleLimits: { reconnectInitialMs: 50, notRunningRetryMs: 100 },
  });
  for (const person of ["alice", "tara"]) cookies[person] = await signInCookie(bff.url, person);
  const alice = await bff.signIn("alice");
  sessionId = await launchRunning(alice, lab.id);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function open(person: "alice" | "tara"): Promise<ConsoleTestClient> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: cookies[person],
    mode: person === "tara" ? "observe" : undefined,
  });
  clients.push(client);
  await client.untilLive();
  return client;
}

/** Prints `prefix-1` ... `prefix-n`; the typed command itself never contains a finished line. */
async function printLines(
  typist: ConsoleTestClient,
  viewers: ConsoleTestClient[],
  prefix: string,
  n: number,
) {
  typist.type(`seq -f '${prefix}''-%g' 1 ${n}\r`);
  for (const viewer of viewers) await viewer.untilScreenShows(`${prefix}-${n}`);
}

/** Each line `prefix-1` ... `prefix-n` on exactly `times` rows of the viewer's terminal. */
function expectLines(viewer: ConsoleTestClient, prefix: string, n: number, times = 1): void {
  const rows = viewer.screen().split("\n");
  const counts = Array.from(
    { length: n },
    (_, index) => rows.filter((row) => row === `${prefix}-${index + 1}`).length,
  );
  expect(counts).toEqual(Array(n).fill(times));
}

function connectedAgain(viewer: ConsoleTestClient, since: number): Promise<void> {
  return viewer.until(
    () =>
      viewer.messages
        .slice(since)
        .some((message) => message.type === "status" && message.state !== "connected") &&
      viewer.lastMessage("status")?.state === "connected",
    "the console to reconnect",
    30_000,
  );
}

describe("a console whose VM connection is cut, then whose VM restarts", () => {
  it("keeps its viewers, and neither live output nor any replay repeats a line", async () => {
    const owner = await open("alice");
    const observer = await open("tara");
    await printLines(owner, [owner, observer], "before", 40);

    // The line to the VM is cut (a proxy, a virt-api restart): the BFF reconnects, viewers stay.
    const seen = [owner.messages.length, observer.messages.length] as const;
    const cutAt = Date.now();
    expect(emulator.emulator.faults.cutConsole(testNamespace, sessionId)).toBe(true);
    await connectedAgain(owner, seen[0]);
    const cutMs = Date.now() - cutAt;
    await connectedAgain(observer, seen[1]);
    await printLines(owner, [owner, observer], "after-cut", 40);
    for (const viewer of [owner, observer]) {
      expect(viewer.closedWith).toBeUndefined();
      expectLines(viewer, "before", 40);
      expectLines(viewer, "after-cut", 40);
    }

    // A browser that reloads now gets a replay holding each line once.
    const reloaded = await open("alice");
    expect(reloaded.lastMessage("replay-begin")).toEqual({ type: "replay-begin", fresh: false });
    expectLines(reloaded, "before", 40);
    expectLines(reloaded, "after-cut", 40);
    reloaded.close();

    // The VM restarts: a new VMI, a new guest booting behind the same console.
    const marks = [owner.messages.length, observer.messages.length] as const;
    const restart = await jsonRequest(
      emulator.emulator,
      "PUT",
      `/apis/subresources.kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${sessionId}/restart`,
      {},
    );
    expect(restart.status).toBe(202);
    const restartedAt = Date.now();
    await connectedAgain(owner, marks[0]);
    console.info(
      `[proof] console reconnected ${cutMs} ms after the cut, ${Date.now() - restartedAt} ms after the VM restart`,
    );
    await connectedAgain(observer, marks[1]);
    for (const viewer of [owner, observer]) {
      expect(viewer.lastMessage("ended")).toBeUndefined();
      expect(viewer.closedWith).toBeUndefined();
    }
    owner.type("\r");
    await printLines(owner, [owner, observer], "after-restart", 20);

    // Everyone reconnects (a reload after the restart): one replay, each line once.
    const viewers = [await open("alice"), await open("tara")];
    for (const viewer of [owner, observer, ...viewers]) {
      expectLines(viewer, "before", 40);
      expectLines(viewer, "after-cut", 40);
      expectLines(viewer, "after-restart", 20);
    }
    for (const viewer of viewers) {
      expect(viewer.messages.filter((message) => message.type === "replay-begin")).toHaveLength(1);
    }
  });
});
