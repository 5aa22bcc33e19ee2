import type { Session } from "../../../../common/api.ts";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { isStaff } from "../../auth/components/role-label.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { useLabs } from "../../labs/api/get-labs.ts";
import { useExtendSession } from "../api/extend-session.ts";
import "./extend-session.css";

/**
 * More time for a session: the lab's extendMinutes, up to its maxExtensions for students. TAs and
 * instructors may extend any session beyond that (the BFF enforces the same rules).
 */
export function ExtendSessionButton({ session }: { session: Session }) {
  const me = useSignedInUser();
  const lab = useLabs().data?.find((entry) => entry.id === session.labId);
  const extend = useExtendSession();
  if (!lab) return null;
  const { extendMinutes, maxExtensions } = lab.session;
  const staff = isStaff(me.role);
  if (!staff && maxExtensions === 0) return null;
  const usedUp = !staff && session.extensions >= maxExtensions;

  return (
    <div className="extend-session">
      <button
        type="button"
        className="button"
        disabled={usedUp || extend.isPending}
        onClick={() => extend.mutate(session.id)}
      >
        {extend.isPending ? "Extending…" : `Extend by ${extendMinutes} min`}
      </button>
      <span className="muted small" data-testid="extensions-used">
        {usedUp
          ? "No extensions left"
          : `${session.extensions} of ${maxExtensions} extension${maxExtensions === 1 ? "" : "s"} used`}
      </span>
      {extend.isError && (
        <p className="notice notice-error" role="alert">
          {getErrorMessage(extend.error)}
        </p>
      )}
    </div>
  );
}
