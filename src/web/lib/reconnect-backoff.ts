// How long the browser waits before reopening a dropped websocket (console or class wall): quick at
// first (a reload of the BFF or a network blip), doubling, capped so a long outage still retries
// twice a minute or so.

export const reconnectCapMs = 15_000;
const firstDelayMs = 500;

/** `attempt` counts failed tries since the last good connection, from 0. Jitter spreads a classroom's retries. */
export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(firstDelayMs * 2 ** attempt, reconnectCapMs);
  return Math.round(base * (0.8 + 0.4 * random()));
}
