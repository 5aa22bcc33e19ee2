import { useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { ConfirmDialog } from "../../../components/confirm-dialog.tsx";
import { ErrorText } from "../../../components/error-text.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useEndSession } from "../api/end-session.ts";

/** "End session" behind a confirmation, because ending deletes the VM and everything on it. */
export function EndSessionButton({
  session,
  labTitle,
  onEnded,
}: {
  session: Session;
  labTitle: LocalText;
  onEnded?: () => void;
}) {
  const { t } = useTranslation();
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
        {t("sessions.end.button")}
      </button>
      <ConfirmDialog
        open={confirming}
        title={t("sessions.end.confirmTitle")}
        confirmLabel={t("sessions.end.button")}
        pendingLabel={t("sessions.end.pending")}
        pending={endSession.isPending}
        error={
          endSession.isError && (
            <p className="notice notice-error" role="alert">
              <ErrorText error={endSession.error} />
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
          <Trans
            i18nKey="sessions.end.confirmBody"
            components={{
              lab: (
                <strong>
                  <LangText text={labTitle} />
                </strong>
              ),
            }}
          />
        </p>
      </ConfirmDialog>
    </>
  );
}
