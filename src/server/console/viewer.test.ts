// One viewer's socket over a real websocket pair: what its frames cost the typing budget, and how
// output is gathered into frames.
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
async function connected(typed: Buffer[], limits = defaultConsoleLimits) {
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
  const viewer = new ConsoleViewer(socket, identity, limits, events);
  let frames = 0;
  const received: Buffer[] = [];
  browser.on("message", (data: Buffer, isBinary) => {
    if (!isBinary) return;
    frames += 1;
    received.push(data);
    browser.send(JSON.stringify({ type: "ack", bytes: data.length }));
  });
  return { viewer, socket, browser, frames: () => frames, received };
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

describe("a viewer's frames", () => {
  it("gather a flood's output for a while after each frame, and lose none of it", async () => {
    const limits = { ...defaultConsoleLimits, flowingFrameIntervalMs: 60_000 };
    const { viewer, received } = await connected([], limits);
    viewer.beginReplay();
    viewer.replay("", false);
    // Forty pieces of 4 KiB, one a turn, as a flood arrives: the first goes at once, then the rest
    // wait until a frame's worth (64 KiB) is gathered.
    const piece = Buffer.alloc(4096, "y");
    for (let turn = 0; turn < 40; turn += 1) {
      viewer.output(piece);
      await nextTurn();
    }
    await expect.poll(() => Buffer.concat(received).length).toBe(2 * 64 * 1024 + 4096);
    expect(received.map((frame) => frame.length)).toEqual([4096, 64 * 1024, 64 * 1024]);
  });

  it("send a keystroke's echo at once, however long the interval", async () => {
    const limits = { ...defaultConsoleLimits, flowingFrameIntervalMs: 60_000 };
    const { viewer, received } = await connected([], limits);
    viewer.beginReplay();
    viewer.replay("", false);
    viewer.output(Buffer.from("$ "));
    await expect.poll(() => received.length).toBe(1);
    viewer.output(Buffer.from("l"));
    await expect.poll(() => received.length).toBe(2);
    expect(Buffer.concat(received).toString()).toBe("$ l");
  });
});
