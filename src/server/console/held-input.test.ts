// Keys typed while the console's line to the VM is down, over real sockets: the emulator cuts the line,
// the BFF waits a few seconds before it connects again, and what the student typed meanwhile runs
// once it is back; more than the BFF holds is refused, and the typist is told so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";
import { ConsoleTestClient, signInCookie } from "./testing/console-client.ts";

const lab = aLab({ id: "held-keys", title: "Held keys" });
const heldInputBytes = 256;

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;
let alice: ConsoleTestClient;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  // A cut line is connected again only after seconds: time enough to type into it.
  bff = await startTestBff({
    labs: [lab],
    emulator,
    consoleLimits: { reconnectInitialMs: 3_000, heldInputBytes },
  });
  sessionId = await launchRunning(await bff.signIn("alice"), lab.id);
  alice = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, "alice"),
  });
  await alice.untilLive();
}, 30_000);

afterAll(async () => {
  alice?.close();
  await bff?.close();
  await emulator?.close();
});

/** Cuts the line to the VM and waits until the console says it is reconnecting. */
async function cutTheLine(): Promise<void> {
  const seen = alice.messages.length;
  expect(emulator.emulator.faults.cutConsole(testNamespace, sessionId)).toBe(true);
  await alice.until(
    () => alice.messages.slice(seen).some((m) => m.type === "status" && m.state === "reconnecting"),
    "the console to reconnect",
  );
}

describe("keys typed while the console connects", () => {
  it("are held, and run once the line is back", async () => {
    await cutTheLine();
    alice.type("echo held''-keys\r");
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected again", 20_000);
    await alice.untilScreenShows("held-keys");
    expect(alice.lastMessage("input-refused")).toBeUndefined();
  });

  it("past what the BFF holds, are refused, and the typist is told", async () => {
    await cutTheLine();
    alice.type("echo still''-held\r");
    alice.type(Buffer.alloc(heldInputBytes, 0x61));
    await alice.until(() => alice.lastMessage("input-refused") !== undefined, "the refusal");
    expect(alice.lastMessage("input-refused")).toEqual({ type: "input-refused", reason: "not_connected" });
    // What was held goes out all the same, in order, before anything typed later.
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected again", 20_000);
    await alice.untilScreenShows("still-held");
  });
});
