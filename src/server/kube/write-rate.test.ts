// The write bound's token bucket on a clock the test moves, with timers that fire late as a busy
// event loop's do: in no second do more writes go than the burst plus a second's refill.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WriteRate } from "./write-rate.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function busiestSecond(times: number[]): number {
  return Math.max(0, ...times.map((at) => times.filter((other) => other >= at && other < at + 1000).length));
}

describe("the write bound", () => {
  it("lets the burst go at once, then the refill rate", async () => {
    const rate = new WriteRate({ perSecond: 20, burst: 40 }, () => Date.now());
    const sent: number[] = [];
    const all = Promise.all(
      Array.from({ length: 200 }, async () => {
        sent.push(await rate.take());
      }),
    );
    await vi.advanceTimersByTimeAsync(20_000);
    await all;
    expect(sent.filter((at) => at === sent[0])).toHaveLength(40);
    expect(busiestSecond(sent)).toBeLessThanOrEqual(60);
    expect(sent.at(-1)! - sent[0]!).toBeGreaterThanOrEqual(((200 - 40) / 20) * 1000 - 1);
  });

  it("holds when writes arrive in waves and timers fire late", async () => {
    const rate = new WriteRate({ perSecond: 20, burst: 40 }, () => Date.now());
    const sent: number[] = [];
    const wave = (count: number) =>
      Array.from({ length: count }, async () => {
        sent.push(await rate.take());
      });
    const waves: Promise<void>[] = [];
    for (let round = 0; round < 20; round++) {
      waves.push(...wave(15));
      // The event loop is busy for a while: every timer due meanwhile fires at its end.
      vi.setSystemTime(Date.now() + 37 * (round % 3));
      await vi.advanceTimersByTimeAsync(113);
    }
    await vi.advanceTimersByTimeAsync(30_000);
    await Promise.all(waves);
    expect(sent).toHaveLength(300);
    expect(busiestSecond(sent)).toBeLessThanOrEqual(60);
  });
});
