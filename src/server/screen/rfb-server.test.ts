import { describe, expect, it } from "vitest";
import { RfbServerSession, type ViewerMessage } from "./rfb-server.ts";

function session() {
  const sent: Buffer[] = [];
  const messages: ViewerMessage[] = [];
  const failures: string[] = [];
  const server = new RfbServerSession((bytes) => sent.push(bytes), {
    serverInit: () => ({ width: 720, height: 400, name: "desktop-lab" }),
    message: (message) => messages.push(message),
    failed: (reason) => failures.push(reason),
  });
  return { server, sent, messages, failures };
}

function handshake() {
  const viewer = session();
  viewer.server.receive(Buffer.from("RFB 003.008\n"));
  viewer.server.receive(Buffer.from([1]));
  viewer.server.receive(Buffer.from([1]));
  return viewer;
}

describe("the BFF's RFB server for browsers", () => {
  it("greets as RFB 3.8 without authentication and sends the screen's size and name", () => {
    const { sent, failures } = handshake();
    expect(failures).toEqual([]);
    expect(sent[0]?.toString()).toBe("RFB 003.008\n");
    expect([...sent[1]!]).toEqual([1, 1]);
    expect([...sent[2]!]).toEqual([0, 0, 0, 0]);
    const init = sent[3]!;
    expect([init.readUInt16BE(0), init.readUInt16BE(2)]).toEqual([720, 400]);
    expect(init.subarray(24).toString()).toBe("desktop-lab");
  });

  it("parses noVNC's messages, whole or in pieces", () => {
    const { server, messages } = handshake();
    const pixelFormat = Buffer.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);
    const encodings = Buffer.from([2, 0, 0, 2, 0xff, 0xff, 0xfe, 0xfc, 0, 0, 0, 0]); // -260, 0
    const request = Buffer.from([3, 1, 0, 0, 0, 0, 2, 208, 1, 144]);
    const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
    const pointer = Buffer.from([5, 1, 0, 10, 0, 20]);
    const all = Buffer.concat([pixelFormat, encodings, request, key, pointer]);
    server.receive(all.subarray(0, 5));
    server.receive(all.subarray(5, 33));
    server.receive(all.subarray(33));
    expect(messages).toEqual([
      { type: "pixel-format", layout: { bigEndian: false, redShift: 0, greenShift: 8, blueShift: 16 } },
      { type: "encodings", encodings: [-260, 0] },
      { type: "update-request", incremental: true },
      { type: "key", down: true, keysym: 0x61 },
      { type: "pointer", buttons: 1, x: 10, y: 20 },
    ]);
  });

  it("closes on what it never invited: another version, a palette, a message type it does not take", () => {
    const old = session();
    old.server.receive(Buffer.from("RFB 003.003\n"));
    expect(old.failures).toEqual(['the client speaks "RFB 003.003", not RFB 3.8']);

    const palette = handshake();
    palette.server.receive(Buffer.from([0, 0, 0, 0, 8, 8, 0, 0, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0]));
    expect(palette.failures).toHaveLength(1);

    const fence = handshake();
    fence.server.receive(Buffer.from([248, 0, 0, 0]));
    expect(fence.failures).toEqual(["the client sent message type 248, which this server does not take"]);
  });
});
