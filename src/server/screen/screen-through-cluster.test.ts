// A VM's screen over real sockets: browsers (RFB clients with the SPA's protocol) -> BFF's screen
// hub -> the emulator's vnc subresource -> a sandboxed guest's VGA screen (tty1, drawn with the VGA
// BIOS font as QEMU draws it). One line to the VM however many watch; one keyboard.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { refusedScreenStatus, ScreenTestClient } from "./testing/screen-client.ts";

const lab = aLab({
  id: "desktop-lab",
  title: "Desktop lab",
  session: {
    minutes: 60,
    extendMinutes: 15,
    maxExtensions: 2,
    terminals: 0,
    consoles: ["serial", "graphical"],
  },
});
const serialOnlyLab = aLab({ id: "serial-only", title: "Serial only" });

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;
let serialSessionId: string;
const clients: ScreenTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab, serialOnlyLab], emulator });
  sessionId = await launchRunning(await bff.signIn("alice"), lab.id);
  serialSessionId = await launchRunning(await bff.signIn("bob"), serialOnlyLab.id);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function open(who: string, mode?: "observe"): Promise<ScreenTestClient> {
  const client = await ScreenTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, who),
    mode,
  });
  clients.push(client);
  await client.untilScreenShows("login:", 40_000);
  return client;
}

describe("a VM's screen through the BFF", () => {
  it("shows tty1 as the VM draws it, and what its owner types", async () => {
    const alice = await open("alice");
    expect(alice.rfb.framebuffer.width).toBe(720);
    expect(alice.rfb.framebuffer.height).toBe(400);
    alice.type("typed-by-alice");
    await alice.untilScreenShows("login: typed-by-alice");
    alice.close();
  });

  it("holds one line to the VM for any number of viewers, and a third viewer cuts nobody off", async () => {
    const first = await open("alice");
    const second = await open("alice");
    const tara = await open("tara", "observe");
    expect(bff.app.consoleHub.stats().connectedUpstreams).toBe(1);
    first.type("x");
    await second.untilScreenShows("x");
    await tara.untilScreenShows("x");
    for (const client of [first, second, tara]) expect(client.socket.readyState).toBe(client.socket.OPEN);
    first.close();
    second.close();
    tara.close();
  });

  it("takes keys only from the keyboard's holder: staff type once they took it, which the owner sees", async () => {
    const alice = await open("alice");
    const tara = await open("tara", "observe");
    await alice.until(
      () => alice.lastMessage("viewers")?.viewers.some((viewer) => viewer.username === "tara") === true,
      "alice sees tara watching",
    );
    expect(tara.lastMessage("keyboard")).toMatchObject({ canType: false, canTake: true });
    tara.type("tara-before");
    alice.type("alice-after");
    await alice.untilScreenShows("alice-after");
    expect(alice.text()).not.toContain("tara-before");

    tara.send({ type: "take-keyboard" });
    await alice.until(() => alice.lastMessage("viewers")?.holder === "tara", "tara holding the keyboard");
    expect(alice.lastMessage("keyboard")).toMatchObject({ canType: false, holder: "tara" });
    tara.type("by-tara");
    await alice.untilScreenShows("by-tara");
    tara.send({ type: "release-keyboard" });
    await alice.until(() => alice.lastMessage("keyboard")?.canType === true, "alice has it back");
    alice.close();
    tara.close();
  });

  it("types a paste as keystrokes for the holder only, and refuses what a keyboard cannot type", async () => {
    const alice = await open("alice");
    const tara = await open("tara", "observe");
    tara.send({ type: "paste", text: "never" });
    await tara.until(() => tara.lastMessage("paste") !== undefined, "tara's paste answered");
    expect(tara.lastMessage("paste")).toMatchObject({ outcome: "refused", reason: "not_holder" });

    alice.send({ type: "paste", text: "Pasted-Text!" });
    await alice.until(() => alice.lastMessage("paste")?.outcome === "typed", "the paste typed");
    expect(alice.lastMessage("paste")?.characters).toBe(12);
    await alice.untilScreenShows("Pasted-Text!");

    alice.send({ type: "paste", text: "naïve" });
    await alice.until(() => alice.lastMessage("paste")?.outcome === "refused", "the paste refused");
    expect(alice.lastMessage("paste")?.reason).toBe("unsupported");
    alice.close();
    tara.close();
  });

  it("sends a reconnecting viewer the screen it had at once, from the BFF's framebuffer", async () => {
    const alice = await open("alice");
    alice.type("kept-screen");
    await alice.untilScreenShows("kept-screen");
    alice.close();
    const again = await ScreenTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "alice"),
    });
    clients.push(again);
    await again.until(() => again.updates > 0, "a first update");
    // The first update is the kept framebuffer: no blank screen in between.
    expect(again.text()).toContain("kept-screen");
    again.close();
  });

  it("refuses the screen of a lab that offers none, and students the screens of others", async () => {
    const bob = await signInCookie(bff.url, "bob");
    expect(await refusedScreenStatus(bff.url, serialSessionId, { cookie: bob })).toBe(404);
    expect(await refusedScreenStatus(bff.url, sessionId, { cookie: bob })).toBe(404);
  });
});
