import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AutoFit, autoFitDelayMs } from "./auto-fit.ts";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("AutoFit", () => {
  it("fits once the window stopped changing, not on every step of a drag", () => {
    const fit = vi.fn();
    const autoFit = new AutoFit(fit);
    for (let step = 0; step < 30; step += 1) {
      autoFit.windowResized();
      vi.advanceTimersByTime(16);
    }
    expect(fit).not.toHaveBeenCalled();
    vi.advanceTimersByTime(autoFitDelayMs);
    expect(fit).toHaveBeenCalledTimes(1);
  });

  it("fits nothing after dispose", () => {
    const fit = vi.fn();
    const autoFit = new AutoFit(fit);
    autoFit.windowResized();
    autoFit.dispose();
    vi.advanceTimersByTime(autoFitDelayMs * 2);
    expect(fit).not.toHaveBeenCalled();
  });
});
