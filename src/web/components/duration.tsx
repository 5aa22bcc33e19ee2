import { useClockText } from "../lib/clock.ts";
import { formatCoarse, formatElapsed, formatTimeLeft } from "../lib/durations.ts";

const formats = { elapsed: formatElapsed, coarse: formatCoarse } as const;

/** Time since `since` (ISO 8601), ticking; a leaf so only this text re-renders. */
export function Elapsed({ since, format = "elapsed" }: { since: string; format?: keyof typeof formats }) {
  const start = Date.parse(since);
  const text = useClockText((now) => formats[format](now - start));
  return <span className="duration">{text}</span>;
}

/** Time until `until` (ISO 8601), ticking. */
export function TimeLeft({ until }: { until: string }) {
  const end = Date.parse(until);
  const text = useClockText((now) => formatTimeLeft(end - now));
  return <span className="duration">{text}</span>;
}
