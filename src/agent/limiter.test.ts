import { describe, expect, it } from "vitest";
import { createLimiter } from "./limiter.ts";

describe("createLimiter", () => {
  it("runs at most `max` tasks at once and every task in the end", async () => {
    const limit = createLimiter(2);
    let running = 0;
    let mostAtOnce = 0;
    const releases: (() => void)[] = [];
    const tasks = Array.from({ length: 5 }, (_, i) =>
      limit(async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        return i;
      }),
    );
    // Release whichever tasks are waiting until all five have been let through.
    for (let released = 0; released < 5;) {
      await new Promise((resolve) => setImmediate(resolve));
      const waiting = releases.splice(0);
      waiting.forEach((release) => release());
      released += waiting.length;
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4]);
    expect(mostAtOnce).toBe(2);
  });

  it("frees the slot when a task fails", async () => {
    const limit = createLimiter(1);
    await expect(limit(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limit(() => Promise.resolve("next"))).resolves.toBe("next");
  });
});
