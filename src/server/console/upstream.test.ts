// The line to a VM's serial console over a real websocket pair: when a heartbeat finds it dead.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { UpstreamLink } from "./upstream.ts";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/**
 * The BFF's end of a console line, and the far end, which never answers a ping itself: its pongs are
 * what a busy virt-api's are to a BFF reading slowly, stuck behind the output it sent before them.
 */
async function lineToSilentPeer() {
  const server = new WebSocketServer({ port: 0, autoPong: false });
  const accepted = once(server, "connection") as Promise<[WebSocket]>;
  const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const [peer] = await accepted;
  await once(socket, "open");
  closers.push(() => {
    socket.terminate();
    server.close();
  });
  const lost: number[] = [];
  const received: Buffer[] = [];
  const link = new UpstreamLink(socket);
  link.listen({ output: (chunk) => received.push(chunk), lost: (code) => lost.push(code), ended: () => {} });
  return { link, peer, lost, received };
}

describe("a console line's heartbeat", () => {
  it("keeps a line that sends output, though its pong has not come", async () => {
    const { link, peer, lost, received } = await lineToSilentPeer();
    for (let beat = 1; beat <= 3; beat += 1) {
      link.heartbeat();
      peer.send(Buffer.from(`output ${beat}\r\n`), { binary: true });
      await expect.poll(() => received.length).toBe(beat);
    }
    link.heartbeat();
    expect(lost).toEqual([]);
    expect(Buffer.concat(received).toString()).toBe("output 1\r\noutput 2\r\noutput 3\r\n");
  });

  it("cuts a line that sent nothing since the last ping", async () => {
    const { link, lost } = await lineToSilentPeer();
    link.heartbeat();
    link.heartbeat();
    await expect.poll(() => lost).toEqual([1006]);
  });
});
