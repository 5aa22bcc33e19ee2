import { useMemo } from "react";
import { formatCoarse, formatElapsed, formatTimeLeft } from "./durations.ts";
import { useLanguage } from "./use-language.ts";

export type Format = ReturnType<typeof createFormat>;

/** Dates, times, numbers and durations the way the page's language writes them. */
export function useFormat(): Format {
  const { tag } = useLanguage();
  return useMemo(() => createFormat(tag), [tag]);
}

export function createFormat(locale: string) {
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" });
  const time = new Intl.DateTimeFormat(locale, { timeStyle: "medium" });
  const shortTime = new Intl.DateTimeFormat(locale, { timeStyle: "short" });
  const number = new Intl.NumberFormat(locale);
  return {
    locale,
    /** An ISO 8601 instant as date and time. */
    dateTime: (iso: string) => dateTime.format(new Date(iso)),
    /** An ISO 8601 instant as a time of day, with seconds. */
    time: (iso: string) => time.format(new Date(iso)),
    /** An ISO 8601 instant as a time of day to the minute, as `dateTime` writes its time. */
    shortTime: (iso: string) => shortTime.format(new Date(iso)),
    number: (value: number) => number.format(value),
    elapsed: (ms: number) => formatElapsed(ms, locale),
    coarse: (ms: number) => formatCoarse(ms, locale),
    timeLeft: (ms: number) => formatTimeLeft(ms, locale),
  };
}
