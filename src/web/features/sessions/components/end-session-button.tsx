import { useState } from "react";
import type { Session } from "../../../../common/api.ts";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { useEndSession } from "../api/end-session.ts";

/** "End session" behind a confirmation, because ending deletes the VM and everything on it. */
export function EndSessionButton({
  session,
  labTitle,
  onEnded,
}: {
  session: Session;
  labTitle: string;
  onEnded?: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const endSession = useEndSession();

  return (
    <>
      <button
        type="button"
        className="button button-danger-quiet"
        onClick={() => {
          endSession.reset();
          setConfirming(true);
        }}
      >
        End session
      </button>
      <ConfirmDialog
        open={confirming}
        title="End this session?"
        confirmLabel="End session"
        pendingLabel="Ending…"
        pending={endSession.isPending}
        error={
          endSession.isError && (
            <p className="notice notice-error" role="alert">
              {getErrorMessage(endSession.error)}
            </p>
          )
        }
        onCancel={() => setConfirming(false)}
        onConfirm={() =>
          endSession.mutate(session.id, {
            onSuccess: () => {
              setConfirming(false);
              onEnded?.();
            },
          })
        }
      >
        <p>
          The virtual machine for <strong>{labTitle}</strong> is deleted with everything on it. Work that is
          not graded or copied elsewhere is lost.
        </p>
      </ConfirmDialog>
    </>
  );
}
