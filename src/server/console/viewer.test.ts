// One viewer's socket over a real websocket pair: what its frames cost the typing budget.
import { patient } from "../../common/testing/patience.ts";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { defaultConsoleLimits } from "./limits.ts";
import { ConsoleViewer, type ViewerEvents } from "./viewer.ts";

const identity = {
  username: "alice",
  role: "student" as const,
  access: "owner" as const,
  signInId: "sign-in",
  loginExpiresAt: Number.POSITIVE_INFINITY,
};

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A viewer on the server's end of a socket, and the browser's end, which acks every frame. */
async function connected(typed: Buffer[]) {
  const server = new WebSocketServer({ port: 0 });
  const accepted = once(server, "connection") as Promise<[WebSocket]>;
  const browser = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const [socket] = await accepted;
  await once(browser, "open");
  closers.push(() => {
    browser.terminate();
    server.close();
  });
  const events: ViewerEvents = {
    input: (_viewer, bytes) => typed.push(bytes),
    control: () => undefined,
    acked: () => undefined,
    closed: () => undefined,
  };
  const viewer = new ConsoleViewer(socket, identity, defaultConsoleLimits, events);
  let frames = 0;
  browser.on("message", (data: Buffer, isBinary) => {
    if (!isBinary) return;
    frames += 1;
    browser.send(JSON.stringify({ type: "ack", bytes: data.length }));
  });
  return { viewer, socket, browser, frames: () => frames };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("a viewer's typing budget", () => {
  it("is not spent by acks that follow output, so a Ctrl-C after a long output goes through at once", async () => {
    const typed: Buffer[] = [];
    const { viewer, browser, frames } = await connected(typed);
    viewer.beginReplay();
    viewer.replay("", false);
    // Ten thousand frames, each acked: about 250 KB of acks, four times the typing burst.
    const sentFrames = 10_000;
    for (let frame = 0; frame < sentFrames; frame += 1) {
      viewer.output(Buffer.from("line of output\r\n"));
      await nextTurn();
    }
    await expect.poll(frames, { timeout: 10_000 }).toBe(sentFrames);
    const typedAt = performance.now();
    browser.send(Buffer.from("\x03"), { binary: true });
    await expect.poll(() => typed.length, { timeout: patient(1_000) }).toBe(1);
    expect(performance.now() - typedAt).toBeLessThan(patient(1_000));
  });

  it("is spent by acks beyond one a frame, as by any other frame", async () => {
    const typed: Buffer[] = [];
    const { viewer, socket, browser } = await connected(typed);
    viewer.beginReplay();
    viewer.replay("", false);
    // No output at all: these acks follow nothing, and 160 KB of them are well past the burst.
    for (let ack = 0; ack < 8_000; ack += 1) browser.send(JSON.stringify({ type: "ack", bytes: 1 }));
    browser.send(Buffer.from("x"), { binary: true });
    // The socket is not read until the debt is paid (seconds at 32 KiB/s): the key waits behind.
    await expect.poll(() => socket.isPaused).toBe(true);
    expect(typed).toEqual([]);
  });
});
