// Durations in the words people use: "14 s", "3 min", "1 h 5 min".

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

/** Seconds up to two minutes (a VM start should visibly tick), then minutes, then hours and minutes. */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 2 * minute) return `${Math.floor(clamped / second)} s`;
  return formatCoarse(clamped);
}

/** Minutes and hours only: for tables, where a ticking second would be noise. */
export function formatCoarse(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < minute) return "< 1 min";
  if (clamped < hour) return `${Math.floor(clamped / minute)} min`;
  const hours = Math.floor(clamped / hour);
  const minutes = Math.floor((clamped % hour) / minute);
  return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
}

/** Time until a deadline; the last minute counts down in seconds so the end is never a surprise. */
export function formatTimeLeft(ms: number): string {
  if (ms <= 0) return "expired";
  if (ms < minute) return `${Math.ceil(ms / second)} s`;
  return formatCoarse(ms);
}
