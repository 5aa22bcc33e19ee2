// Durations in the words people use, in their language: "14 sec", "3 min", "1 hr, 5 min" in
// English, "1 時間 5 分" in Japanese, "1小时5分钟" in Chinese. Intl knows the unit names.

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

type Unit = "second" | "minute" | "hour";

// Formatters are costly to build and a table re-formats every second: one per locale and unit.
const unitFormats = new Map<string, Intl.NumberFormat>();
const listFormats = new Map<string, Intl.ListFormat>();

function formatUnit(value: number, unit: Unit, locale: string): string {
  const key = `${locale} ${unit}`;
  let format = unitFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, { style: "unit", unit, unitDisplay: "short" });
    unitFormats.set(key, format);
  }
  return format.format(value);
}

function formatList(parts: string[], locale: string): string {
  let format = listFormats.get(locale);
  if (!format) {
    format = new Intl.ListFormat(locale, { type: "unit", style: "short" });
    listFormats.set(locale, format);
  }
  return format.format(parts);
}

/** Seconds up to two minutes (a VM start should visibly tick), then minutes, then hours and minutes. */
export function formatElapsed(ms: number, locale: string): string {
  const clamped = Math.max(0, ms);
  if (clamped < 2 * minute) return formatUnit(Math.floor(clamped / second), "second", locale);
  return formatCoarse(clamped, locale);
}

/** Minutes and hours only: for tables, where a ticking second would be noise. */
export function formatCoarse(ms: number, locale: string): string {
  const clamped = Math.max(0, ms);
  if (clamped < minute) return `< ${formatUnit(1, "minute", locale)}`;
  if (clamped < hour) return formatUnit(Math.floor(clamped / minute), "minute", locale);
  const hours = formatUnit(Math.floor(clamped / hour), "hour", locale);
  const minutes = Math.floor((clamped % hour) / minute);
  return minutes === 0 ? hours : formatList([hours, formatUnit(minutes, "minute", locale)], locale);
}

/**
 * Time until a deadline; the last minute counts down in seconds so the end is never a surprise.
 * Null once the deadline has passed, which the page says in words.
 */
export function formatTimeLeft(ms: number, locale: string): string | null {
  if (ms <= 0) return null;
  if (ms < minute) return formatUnit(Math.ceil(ms / second), "second", locale);
  return formatCoarse(ms, locale);
}
