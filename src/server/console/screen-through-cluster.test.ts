// A VM's screen over real sockets: browsers (RFB clients with the SPA's protocol) -> BFF's screen
// hub -> the emulator's vnc subresource -> a sandboxed guest's VGA screen (tty1, drawn with the VGA
// BIOS font as QEMU draws it). One line to the VM however many watch; one keyboard.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { signInCookie } from "./testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { WallTestClient } from "../wall/testing/wall-client.ts";
import { pngPixels } from "../../emulator/testing/png-pixels.ts";
import { refusedScreenStatus, ScreenTestClient } from "../screen/testing/screen-client.ts";

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

const controlKeysym = 0xffe3;

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
  await client.untilScreenShows(":~$", 40_000);
  return client;
}

describe("a VM's screen through the BFF", () => {
  it("shows tty1 as the VM draws it, and what its owner types", async () => {
    const alice = await open("alice");
    expect(alice.rfb.framebuffer.width).toBe(720);
    expect(alice.rfb.framebuffer.height).toBe(400);
    alice.type("typed-by-alice");
    await alice.untilScreenShows(":~$ typed-by-alice");
    alice.close();
  });

  it("holds one line to the VM for any number of viewers, and a third viewer cuts nobody off", async () => {
    const first = await open("alice");
    const second = await open("alice");
    const tara = await open("tara", "observe");
    expect(bff.app.consoleHub.stats().connectedUpstreams).toBe(1);
    first.type("seen-by-all");
    await second.untilScreenShows("seen-by-all");
    await tara.untilScreenShows("seen-by-all");
    for (const client of [first, second, tara]) expect(client.socket.readyState).toBe(client.socket.OPEN);
    first.close();
    second.close();
    tara.close();
  });

  it("lets a stalled viewer skip frames without holding back the others: it gets the newest screen in one", async () => {
    const alice = await open("alice");
    const stalled = await ScreenTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "tara"),
      mode: "observe",
      keepAsking: false,
    });
    clients.push(stalled);
    await stalled.until(() => stalled.updates > 0, "the stalled viewer's first screen");
    const before = stalled.updates;
    for (const character of "skipped") {
      alice.type(character);
      await alice.untilScreenShows(`skipped`.slice(0, "skipped".indexOf(character) + 1));
    }
    expect(stalled.updates).toBe(before);
    stalled.rfb.requestUpdate(true);
    await stalled.until(() => stalled.updates > before, "the stalled viewer's next update");
    expect(stalled.updates).toBe(before + 1);
    expect(stalled.text()).toContain("skipped");
    alice.close();
    stalled.close();
  });

  it("answers a flood of whole-screen requests with a few whole screens, not one each", async () => {
    const tara = await open("tara", "observe");
    const before = tara.bytesReceived;
    const wholeScreen = Buffer.from([3, 0, 0, 0, 0, 0, 720 >> 8, 720 & 0xff, 400 >> 8, 400 & 0xff]);
    tara.socket.send(Buffer.concat(Array.from({ length: 300 }, () => wholeScreen)), { binary: true });
    const alice = await open("alice");
    alice.type("after-the-flood");
    await tara.untilScreenShows("after-the-flood");
    // Raw, as this client asks: 1.1 MiB a whole screen. Four at once, then two a second, at most.
    expect(tara.bytesReceived - before).toBeLessThan(8 * 720 * 400 * 4);
    alice.close();
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
    // Tara gives the keyboard back with Control still held: the BFF lets go of it in the guest, or
    // alice's letters would arrive as control characters.
    tara.rfb.key(controlKeysym, true);
    tara.send({ type: "release-keyboard" });
    await alice.until(() => alice.lastMessage("keyboard")?.canType === true, "alice has it back");
    alice.type("ctrl-let-go");
    await alice.untilScreenShows("ctrl-let-go");
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

  it("shows the class wall the desktop in miniature, from the screen the BFF already holds", async () => {
    const wall = await WallTestClient.connect(bff.url, lab.id, {
      cookie: await signInCookie(bff.url, "tara"),
    });
    await wall.until(() => wall.desktops.has(sessionId), "a desktop miniature");
    const first = wall.desktops.get(sessionId)!;
    expect([first.width, first.height]).toEqual([240, 133]);
    const image = pngPixels(Buffer.from(first.png, "base64"));
    expect([image.width, image.height]).toEqual([240, 133]);
    // tty1's text shows as grey on black: some pixels are lit.
    expect(image.rgb.some((value) => value > 0x40)).toBe(true);

    const alice = await open("alice");
    const sent = wall.desktopsReceived;
    alice.type("on-the-wall");
    await wall.until(() => wall.desktopsReceived > sent, "a newer miniature after typing");
    expect(wall.desktops.get(sessionId)!.png).not.toBe(first.png);
    // One line to the VM's screen for the wall and the viewer together (and one to its serial console).
    expect(bff.app.consoleHub.stats().connectedUpstreams).toBe(2);
    alice.close();
    wall.close();
  });

  it("refuses the screen of a lab that offers none, and students the screens of others", async () => {
    const bob = await signInCookie(bff.url, "bob");
    expect(await refusedScreenStatus(bff.url, serialSessionId, { cookie: bob })).toBe(404);
    expect(await refusedScreenStatus(bff.url, sessionId, { cookie: bob })).toBe(404);
  });
});
