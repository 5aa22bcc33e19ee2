// The seeding's own decisions, with a log reader that answers what each case needs: when the log is
// read, how a tail the byte limit cut is asked for again, and what a failure leaves.
import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import type { ConsoleLogBounds, ConsoleLogText } from "../kube/client.ts";
import { LogSeeding, type SeededScreen } from "./log-seeding.ts";

const limits = {
  scrollbackLines: 1000,
  initialRows: 24,
  seedLogMaxBytes: 1000,
  seedLogSettleMs: 80,
  seedLogTimeoutMs: 300,
};
const quietLog = {
  info: () => undefined,
  warn: () => undefined,
} as unknown as FastifyBaseLogger;

function seed(
  read: (bounds: ConsoleLogBounds, signal: AbortSignal) => Promise<ConsoleLogText>,
  during?: (seeding: LogSeeding) => void,
): Promise<SeededScreen> {
  return new Promise((resolve) => {
    const seeding = new LogSeeding(
      { sessionId: "s-1", read: (_id, bounds, signal) => read(bounds, signal), limits, log: quietLog },
      resolve,
    );
    during?.(seeding);
  });
}

describe("a fresh console's seeding from the log", () => {
  it("reads the log only after it had time to catch up with the line just opened", async () => {
    const openedAt = performance.now();
    let readAfterMs = 0;
    const screen = await seed(
      async () => {
        readAfterMs = performance.now() - openedAt;
        return { logging: "on", text: "before\nheld\n" };
      },
      (seeding) => seeding.hold(Buffer.from("held\r\nafter\r\n")),
    );
    expect(readAfterMs).toBeGreaterThanOrEqual(limits.seedLogSettleMs - 1);
    expect(screen.seed.toString()).toBe("before\r\nheld\r\n");
    expect(screen.live.toString()).toBe("after\r\n");
  });

  it("asks for fewer lines when the byte limit cut the tail (it keeps the oldest bytes)", async () => {
    const asked: number[] = [];
    const screen = await seed(async ({ tailLines, limitBytes }) => {
      asked.push(tailLines);
      const line = "x".repeat(9);
      return { logging: "on", text: `${line}\n`.repeat(tailLines).slice(0, limitBytes) };
    });
    expect(asked).toEqual([1024, 256, 64]);
    expect(screen.seed.toString()).toBe("xxxxxxxxx\r\n".repeat(64));
  });

  it("starts blank, saying why, when logging is off, the read fails or takes too long", async () => {
    const held = (seeding: LogSeeding) => seeding.hold(Buffer.from("live\r\n"));
    const off = await seed(async () => ({ logging: "off" }), held);
    expect(off).toEqual({ seed: Buffer.alloc(0), live: Buffer.from("live\r\n"), blankReason: "log-off" });
    const failed = await seed(() => Promise.reject(new Error("pods/log forbidden")));
    expect(failed.blankReason).toBe("log-unreadable");
    const hanging = await seed(() => new Promise(() => undefined));
    expect(hanging.blankReason).toBe("log-unreadable");
  });
});
