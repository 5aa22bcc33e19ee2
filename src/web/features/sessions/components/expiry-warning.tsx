import type { Session } from "../../../../common/api.ts";
import { useClockText } from "../../../lib/clock.ts";
import { expiryWarningLevel } from "./expiry-warning-level.ts";

/**
 * A warning in the last 10, 5 and 1 minutes of a session. The clock is read through a formatter that
 * returns the level, so this re-renders (and screen readers announce it) once per threshold.
 */
export function ExpiryWarning({ session, own }: { session: Session; own: boolean }) {
  const end = Date.parse(session.expiresAt);
  const level = useClockText((now) => String(expiryWarningLevel(end - now) ?? ""));
  if (level === "") return null;
  const within = level === "1" ? "a minute" : `${level} minutes`;
  const whose = own ? "Your session" : "This session";
  const advice = own
    ? level === "1"
      ? " Save your work now: the VM is deleted when the time is up."
      : " Save your work, or extend it if you need more time."
    : "";
  return (
    <p key={level} className="notice notice-warning expiry-warning" role="alert" data-level={level}>
      {whose} ends in under {within}.{advice}
    </p>
  );
}
