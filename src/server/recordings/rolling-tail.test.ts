import { describe, expect, it } from "vitest";
import { RollingTail } from "./rolling-tail.ts";
import { gapOf, outputOf } from "./testing/cast.ts";

/** A small deterministic random source, so a failure can be replayed. */
function randomSource(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return { int: (below: number) => Math.floor(next() * below) };
}

const pieces = ["a", "word ", "é", "€", "😀", "\r\n", "\u001b[1;32m", "\u001b[0m", '"quoted"'];
const limit = 8 * 1024;

/** Output of about `bytes`, in pieces that JSON escapes and characters of every UTF-8 length. */
function outputAbout(bytes: number, random: ReturnType<typeof randomSource>): Buffer {
  const chosen: string[] = [];
  for (let length = 0; length < bytes;) {
    const piece = pieces[random.int(pieces.length)]!;
    chosen.push(piece);
    length += Buffer.byteLength(piece);
  }
  return Buffer.from(chosen.join(""));
}

/** What a tail written after `printed` must be: within the share, whole characters, an exact count. */
function expectWritten(tail: string, printed: Buffer, where: string) {
  const cast = `{"version":2}\n${tail}`;
  const written = Buffer.from(outputOf(cast));
  // A character still being printed waits for its last bytes.
  const whole = Buffer.from(printed.toString("utf8").replace(/\ufffd$/u, ""));
  expect(Buffer.byteLength(tail), where).toBeLessThanOrEqual(limit);
  expect(written.toString("utf8"), where).not.toContain("\ufffd");
  expect(whole.subarray(whole.length - written.length).equals(written), where).toBe(true);
  expect((gapOf(cast)?.dropped ?? 0) + written.length, where).toBe(whole.length);
  if (whole.length > limit) expect(written.length, where).toBeGreaterThan(limit / 4);
}

describe("a recording's tail written again and again while output goes on", () => {
  it("holds at each write the newest whole characters that fit, and counts exactly what it let go of", () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const random = randomSource(seed);
      const tail = new RollingTail(limit, limit / 4);
      const pushed: Buffer[] = [];
      let seconds = 0;
      for (let burst = 0; burst < 30; burst += 1) {
        // A keystroke's echo, a screenful, nearly the share (whose lines are longer than it), or a
        // flood past the whole share.
        const bytes = outputAbout([3, 600, limit - 100, 3 * limit][random.int(4)]!, random);
        // Cut anywhere, through characters too, some of it in the same millisecond, and written now
        // and then: at the end of the burst, or in the middle of a character.
        for (let at = 0; at < bytes.length;) {
          const end = Math.min(bytes.length, at + 1 + random.int(700));
          if (random.int(2) === 0) seconds += 0.001;
          tail.push({ bytes: bytes.subarray(at, end), seconds });
          pushed.push(bytes.subarray(at, end));
          at = end;
          if (at === bytes.length || random.int(8) === 0)
            expectWritten(tail.text(), Buffer.concat(pushed), `seed ${seed}, burst ${burst}`);
        }
      }
    }
  });
});

describe("a recording's tail", () => {
  it("takes older output only before its first write", () => {
    const tail = new RollingTail(limit, limit / 4);
    tail.pushOlder([{ bytes: Buffer.from("older "), seconds: 1 }]);
    tail.push({ bytes: Buffer.from("newer"), seconds: 2 });
    expect(outputOf(`{"version":2}\n${tail.text()}`)).toBe("older newer");
    expect(() => tail.pushOlder([{ bytes: Buffer.from("too late"), seconds: 0 }])).toThrow(
      /only before its first write/,
    );
  });
});
