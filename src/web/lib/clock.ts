import { useSyncExternalStore } from "react";

// One shared one-second clock. Components read it through a formatter that returns a string, so React
// re-renders only the text whose value changed: a table of 100 sessions showing "12 min" re-renders
// once a minute per cell, not every second per row.

const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;

function tick() {
  now = Date.now();
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  if (timer === undefined) {
    timer = setInterval(tick, 1000);
    // The clock slept while nobody watched: catch up now rather than show an old time for a second.
    if (Date.now() - now >= 1000) queueMicrotask(tick);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** Renders `format(now)`, re-rendering only when the string changes. */
export function useClockText(format: (nowMs: number) => string): string {
  return useSyncExternalStore(
    subscribe,
    () => format(now),
    () => format(now),
  );
}
