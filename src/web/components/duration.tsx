import { useTranslation } from "react-i18next";
import { useClockText } from "../lib/clock.ts";
import { useFormat } from "../lib/i18n/use-format.ts";

/** Time since `since` (ISO 8601), ticking; a leaf so only this text re-renders. */
export function Elapsed({ since, format = "elapsed" }: { since: string; format?: "elapsed" | "coarse" }) {
  const formats = useFormat();
  const start = Date.parse(since);
  const text = useClockText((now) => formats[format](now - start));
  return <span className="duration">{text}</span>;
}

/** Time until `until` (ISO 8601), ticking. */
export function TimeLeft({ until }: { until: string }) {
  const { t } = useTranslation();
  const format = useFormat();
  const end = Date.parse(until);
  const text = useClockText((now) => format.timeLeft(end - now) ?? t("common.expired"));
  return <span className="duration">{text}</span>;
}
