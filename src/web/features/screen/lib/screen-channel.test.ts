import { describe, expect, it, vi } from "vitest";
import { channelState, ScreenChannel } from "./screen-channel.ts";

function aChannel() {
  const sent: Uint8Array[] = [];
  const texts: string[] = [];
  const socket = { send: (bytes: Uint8Array) => sent.push(bytes.slice()), close: vi.fn() };
  const channel = new ScreenChannel(socket, (text) => texts.push(text));
  return { channel, sent, texts, socket };
}

const bytes = (...values: number[]) => new Uint8Array(values).buffer;
const flushMicrotasks = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe("ScreenChannel", () => {
  it("has every property noVNC's Websock.attach checks for, as an open WebSocket", () => {
    const { channel } = aChannel();
    const names = [...Object.keys(channel), ...Object.getOwnPropertyNames(Object.getPrototypeOf(channel))];
    for (const property of [
      "send",
      "close",
      "binaryType",
      "onerror",
      "onmessage",
      "onopen",
      "protocol",
      "readyState",
    ])
      expect(names).toContain(property);
    expect(channel.readyState).toBe(channelState.open);
  });

  it("gives binary frames to noVNC and text frames to the screen's handler, each in order", () => {
    const { channel, texts } = aChannel();
    const noVnc: number[][] = [];
    channel.onmessage = (event) => noVnc.push([...new Uint8Array(event.data)]);
    channel.deliver(bytes(82, 70, 66));
    channel.deliver('{"type":"status"}');
    channel.deliver(bytes(1, 2));
    channel.deliver('{"type":"viewers"}');
    expect(noVnc).toEqual([
      [82, 70, 66],
      [1, 2],
    ]);
    expect(texts).toEqual(['{"type":"status"}', '{"type":"viewers"}']);
  });

  it("holds binary frames that come before noVNC attaches, and hands them over in order after it has", async () => {
    const { channel, texts } = aChannel();
    channel.deliver(bytes(1));
    channel.deliver('{"type":"keyboard"}');
    channel.deliver(bytes(2));
    const noVnc: number[] = [];
    channel.onmessage = (event) => noVnc.push(...new Uint8Array(event.data));
    // Not during the assignment: noVNC reads the channel as open only after it set onmessage.
    expect(noVnc).toEqual([]);
    channel.deliver(bytes(3));
    await flushMicrotasks();
    expect(noVnc).toEqual([1, 2, 3]);
    expect(texts).toEqual(['{"type":"keyboard"}']);
    channel.deliver(bytes(4));
    expect(noVnc).toEqual([1, 2, 3, 4]);
  });

  it("sends noVNC's frames as the bytes of the view it passes, not its whole buffer", () => {
    const { channel, sent } = aChannel();
    const queue = new Uint8Array([9, 9, 1, 2, 3, 9]);
    channel.send(new Uint8Array(queue.buffer, 2, 3));
    channel.send(bytes(7));
    expect(sent.map((each) => [...each])).toEqual([[1, 2, 3], [7]]);
  });

  it("tells noVNC when the socket closed, then passes nothing more either way", async () => {
    const { channel, sent } = aChannel();
    const noVnc: number[] = [];
    const closes: number[] = [];
    channel.onmessage = (event) => noVnc.push(...new Uint8Array(event.data));
    channel.onclose = (event) => closes.push(event.code);
    channel.closed(1006);
    channel.closed(1006);
    expect(closes).toEqual([1006]);
    expect(channel.readyState).toBe(channelState.closed);
    channel.deliver(bytes(1));
    channel.send(bytes(2));
    await flushMicrotasks();
    expect(noVnc).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("drops frames held for noVNC when the socket closes before it attached", async () => {
    const { channel } = aChannel();
    channel.deliver(bytes(1));
    channel.closed(1006);
    const noVnc: number[] = [];
    channel.onmessage = (event) => noVnc.push(...new Uint8Array(event.data));
    await flushMicrotasks();
    expect(noVnc).toEqual([]);
  });

  it("passes noVNC's close to the socket once, and then reads as closing", () => {
    const { channel, socket } = aChannel();
    channel.close();
    channel.close();
    expect(socket.close).toHaveBeenCalledTimes(1);
    expect(channel.readyState).toBe(channelState.closing);
  });
});
