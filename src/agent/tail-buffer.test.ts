import { describe, expect, it } from "vitest";
import { TailBuffer } from "./tail-buffer.ts";

describe("TailBuffer", () => {
  it("keeps everything below the limit", () => {
    const buffer = new TailBuffer(10);
    buffer.push(Buffer.from("abc"));
    buffer.push(Buffer.from("def"));
    expect(buffer.text()).toBe("abcdef");
    expect(buffer.truncated).toBe(false);
  });

  it("keeps the last bytes across chunks once over the limit", () => {
    const buffer = new TailBuffer(5);
    for (const chunk of ["abc", "def", "ghij"]) buffer.push(Buffer.from(chunk));
    expect(buffer.text()).toBe("fghij");
    expect(buffer.truncated).toBe(true);
  });

  it("drops a character cut in half by the limit instead of showing a broken one", () => {
    const buffer = new TailBuffer(4);
    buffer.push(Buffer.from("x€yz")); // € is 3 bytes: the last 4 bytes start inside it
    expect(buffer.text()).toBe("yz");
  });
});
