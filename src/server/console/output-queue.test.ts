import { describe, expect, it } from "vitest";
import { OutputQueue } from "./output-queue.ts";

const lines = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `line ${from + index} of a flood of plain text\r\n`).join("");

const joined = (parts: Uint8Array[]) => Buffer.concat(parts).toString("utf8");

describe("OutputQueue", () => {
  it("holds the last lines of a flood as it arrives, not the flood", () => {
    const queue = new OutputQueue(10);
    const flood = Buffer.from(lines(300_000), "utf8");
    let most = 0;
    for (let offset = 0; offset < flood.length; offset += 16 * 1024) {
      queue.push(flood.subarray(offset, offset + 16 * 1024), true);
      most = Math.max(most, queue.bytes);
    }
    expect(flood.length).toBeGreaterThan(8 * 1024 * 1024);
    expect(most).toBeLessThan(512 * 1024);
    const { parts, end } = queue.take();
    expect(end).toBe(flood.length);
    // A CR where the head went, then the last 10 lines whole.
    expect(joined(parts)).toBe(`\r${lines(10, 299_990)}`);
    expect(queue.bytes).toBe(0);
  });

  it("gives a reader exactly the output before its position, whatever came after", () => {
    const queue = new OutputQueue(2);
    const first = `${lines(5)}\x1b[1m${lines(5, 5)}`;
    queue.push(Buffer.from(first, "utf8"), true);
    const position = queue.end;
    // Output after the reader's position: nothing may be dropped on its behalf.
    queue.push(Buffer.from(lines(1000, 10), "utf8"), false);
    const before = queue.take(position);
    expect(before.end).toBe(position);
    // The run open at the position goes on after it: whether its head scrolls away depends on what
    // came later, so it is kept whole.
    expect(joined(before.parts)).toBe(`\r${lines(2, 3)}\x1b[1m${lines(5, 5)}`);
    expect(joined(queue.take().parts)).toBe(`\r${lines(2, 1008)}`);
  });

  it("cuts a chunk in two at a reader's position", () => {
    const queue = new OutputQueue(100);
    queue.push(Buffer.from("abcdef"), true);
    expect(joined(queue.take(2).parts)).toBe("ab");
    expect(queue.bytes).toBe(4);
    expect(joined(queue.take().parts)).toBe("cdef");
  });
});
