import { constants, createDeflate } from "node:zlib";
import { describe, expect, it } from "vitest";
import { framebufferPixelFormat, RfbClient } from "./rfb-client.ts";

/** A server's ServerInit: size, QEMU's pixel format (32 bpp, little-endian, red at 16), name. */
function serverInit(width: number, height: number, name: string): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt16BE(width, 0);
  head.writeUInt16BE(height, 2);
  Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(head, 4);
  head.writeUInt32BE(Buffer.byteLength(name), 20);
  return Buffer.concat([head, Buffer.from(name)]);
}

function rectHeader(x: number, y: number, width: number, height: number, encoding: number): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(x, 0);
  header.writeUInt16BE(y, 2);
  header.writeUInt16BE(width, 4);
  header.writeUInt16BE(height, 6);
  header.writeInt32BE(encoding, 8);
  return header;
}

/** A FramebufferUpdate of `count` rectangles: their headers and data, in order. */
function update(count: number, ...parts: Buffer[]): Buffer {
  const head = Buffer.from([0, 0, 0, 0]);
  head.writeUInt16BE(count, 2);
  return Buffer.concat([head, ...parts]);
}

/** A pixel in the format the client asks for: bytes red, green, blue, unused. */
function pixel(red: number, green: number, blue: number): Buffer {
  return Buffer.from([red, green, blue, 0]);
}

/** One zlib stream, flushed after each piece, as QEMU's Zlib encoding sends it. */
async function zlibPieces(...pieces: Buffer[]): Promise<Buffer[]> {
  const deflate = createDeflate();
  const out: Buffer[] = [];
  for (const piece of pieces) {
    const chunks: Buffer[] = [];
    const collect = (chunk: Buffer) => chunks.push(chunk);
    deflate.on("data", collect);
    deflate.write(piece);
    await new Promise<void>((resolve) => deflate.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    deflate.off("data", collect);
    out.push(Buffer.concat(chunks));
  }
  return out;
}

function withLength(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

function connected() {
  const sent: Buffer[] = [];
  const failures: string[] = [];
  const client = new RfbClient((bytes) => sent.push(Buffer.from(bytes)), {
    failed: (why) => failures.push(why),
  });
  client.receive(Buffer.from("RFB 003.008\n"));
  client.receive(Buffer.from([1, 1]));
  client.receive(Buffer.from([0, 0, 0, 0]));
  client.receive(serverInit(4, 2, "QEMU (lab)"));
  return { client, sent, failures };
}

describe("RfbClient", () => {
  it("answers the handshake as a shared RFB 3.8 client without authentication and asks for 32-bit pixels", () => {
    const { client, sent, failures } = connected();
    expect(failures).toEqual([]);
    expect(sent[0]?.toString()).toBe("RFB 003.008\n");
    expect([...(sent[1] ?? [])]).toEqual([1]); // security type None
    expect([...(sent[2] ?? [])]).toEqual([1]); // ClientInit: shared
    expect(sent[3]?.[0]).toBe(0); // SetPixelFormat
    expect(sent[3]?.subarray(4)).toEqual(framebufferPixelFormat);
    expect(sent[4]?.[0]).toBe(2); // SetEncodings
    expect(sent[5]?.[0]).toBe(3); // a full FramebufferUpdateRequest
    expect(sent[5]?.[1]).toBe(0);
    expect(client.name).toBe("QEMU (lab)");
    expect(client.framebuffer).toMatchObject({ width: 4, height: 2 });
  });

  it("draws Raw and CopyRect rectangles, even from a message split across receives", () => {
    const { client } = connected();
    const red = pixel(255, 0, 0);
    const blue = pixel(0, 0, 255);
    const message = update(
      2,
      rectHeader(0, 0, 2, 1, 0),
      red,
      blue,
      rectHeader(2, 1, 2, 1, 1),
      Buffer.from([0, 0, 0, 0]), // copy from (0, 0)
    );
    client.receive(message.subarray(0, 7));
    client.receive(message.subarray(7));
    const at = (x: number, y: number) => [
      ...client.framebuffer.pixels.subarray((y * 4 + x) * 4, (y * 4 + x) * 4 + 4),
    ];
    expect(at(0, 0)).toEqual([255, 0, 0, 0]);
    expect(at(1, 0)).toEqual([0, 0, 255, 0]);
    expect(at(2, 1)).toEqual([255, 0, 0, 0]);
    expect(at(3, 1)).toEqual([0, 0, 255, 0]);
  });

  it("draws a whole screen of Raw that arrives in many small pieces", () => {
    const { client, failures } = connected();
    const pixels = Buffer.concat(
      Array.from({ length: 8 }, (_, index) => pixel(index * 30, 0, 255 - index * 30)),
    );
    const message = update(1, rectHeader(0, 0, 4, 2, 0), pixels);
    for (let at = 0; at < message.length; at += 3) client.receive(message.subarray(at, at + 3));
    expect(failures).toEqual([]);
    expect(Buffer.from(client.framebuffer.pixels)).toEqual(pixels);
  });

  it("draws Zlib rectangles from one stream that runs through the connection", async () => {
    const { client, failures } = connected();
    const green = pixel(0, 255, 0);
    const white = pixel(255, 255, 255);
    const [first, second] = await zlibPieces(Buffer.concat([green, green]), Buffer.concat([white, white]));
    client.receive(update(1, rectHeader(0, 0, 2, 1, 6), withLength(first!)));
    // The second piece only inflates after the first: it refers back into the same stream.
    client.receive(update(1, rectHeader(2, 1, 2, 1, 6), withLength(second!)));
    expect(failures).toEqual([]);
    const at = (x: number, y: number) => [
      ...client.framebuffer.pixels.subarray((y * 4 + x) * 4, (y * 4 + x) * 4 + 4),
    ];
    expect(at(1, 0)).toEqual([0, 255, 0, 0]);
    expect(at(3, 1)).toEqual([255, 255, 255, 0]);

    client.receive(update(1, rectHeader(0, 0, 1, 1, 6), withLength(Buffer.from([1, 2, 3, 4]))));
    expect(failures).toEqual(["the server's zlib stream is corrupt"]);
  });

  it("follows the screen's size when the guest changes mode (DesktopSize and ExtendedDesktopSize)", () => {
    const { client } = connected();
    client.receive(update(1, rectHeader(0, 0, 720, 400, -223)));
    expect(client.framebuffer).toMatchObject({ width: 720, height: 400 });
    const screens = Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(16)]);
    client.receive(update(1, rectHeader(0, 0, 640, 480, -308), screens));
    expect(client.framebuffer).toMatchObject({ width: 640, height: 480 });
  });

  it("gives up on a server that draws outside its screen or sends an endless clipboard, before keeping any of it", () => {
    const outside = connected();
    outside.client.receive(update(1, rectHeader(3, 0, 2, 1, 0), pixel(1, 2, 3), pixel(4, 5, 6)));
    expect(outside.failures).toEqual(["the server sent a rectangle outside its 4x2 screen"]);

    const copied = connected();
    copied.client.receive(update(1, rectHeader(0, 0, 2, 2, 1), Buffer.from([0, 3, 0, 0])));
    expect(copied.failures).toEqual(["the server copied from outside its screen"]);

    const huge = connected();
    huge.client.receive(update(1, rectHeader(0, 0, 65535, 65535, 6), Buffer.from([0, 0, 0, 4])));
    expect(huge.failures).toEqual(["the server sent a rectangle outside its 4x2 screen"]);

    const clipboard = connected();
    clipboard.client.receive(Buffer.from([3, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]));
    expect(clipboard.failures).toEqual(["the server's clipboard text is too long"]);
  });

  it("gives up with the server's words when it refuses, and on an encoding it was not asked for", () => {
    const refused: string[] = [];
    const client = new RfbClient(() => {}, { failed: (why) => refused.push(why) });
    client.receive(Buffer.from("RFB 003.008\n"));
    client.receive(Buffer.concat([Buffer.from([0, 0, 0, 0, 4]), Buffer.from("busy")])); // no types, a reason
    expect(refused).toEqual(["the server refused the connection: busy"]);

    const { client: other, failures } = connected();
    other.receive(update(1, rectHeader(0, 0, 1, 1, 16)));
    expect(failures).toEqual(["the server sent encoding 16, which was not asked for"]);
  });
});
