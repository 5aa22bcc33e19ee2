import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import { ErrorText } from "../../../components/error-text.tsx";
import { useRestartSession } from "../api/restart-session.ts";

/**
 * "Restart the VM" behind a warning: every lab boots from a containerDisk, which is ephemeral, so a
 * restart loses whatever was not saved elsewhere.
 */
export function RestartSessionButton({ session }: { session: Session }) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const restart = useRestartSession();

  return (
    <>
      <button
        type="button"
        className="button"
        onClick={() => {
          restart.reset();
          setConfirming(true);
        }}
      >
        {t("sessions.restart.action")}
      </button>
      <ConfirmDialog
        open={confirming}
        title={t("sessions.restart.title")}
        confirmLabel={t("sessions.restart.action")}
        pendingLabel={t("sessions.restart.pending")}
        pending={restart.isPending}
        error={
          restart.isError && (
            <p className="notice notice-error" role="alert">
              <ErrorText error={restart.error} />
            </p>
          )
        }
        onCancel={() => setConfirming(false)}
        onConfirm={() => restart.mutate(session.id, { onSuccess: () => setConfirming(false) })}
      >
        <p className="notice notice-warning">{t("sessions.restart.body")}</p>
      </ConfirmDialog>
    </>
  );
}
