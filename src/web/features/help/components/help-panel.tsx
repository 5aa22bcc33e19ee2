import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { isStaff } from "../../../lib/roles.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { useChangeHelp } from "../api/help-requests.ts";
import { HandBadge } from "./hand-badge.tsx";

/**
 * The student asks for help (a note is optional) and may lower the hand; staff see it and answer
 * it. The console below is where the TA then observes or takes the keyboard. `onChanged` gets the
 * session with its hand changed.
 */
export function HelpPanel({
  session,
  onChanged,
}: {
  session: Session;
  onChanged: (session: Session) => Promise<void>;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const change = useChangeHelp(onChanged);
  const [note, setNote] = useState("");
  const owner = me.username === session.owner;
  const staff = isStaff(me.role);
  const help = session.help;
  if (session.status !== "running" && session.status !== "starting") return null;
  if (!owner && !(staff && help)) return null;

  return (
    <section className="help-panel" aria-label={t("help.label")}>
      <HandBadge help={help} />
      {help?.note && <q className="muted">{help.note}</q>}
      {owner && !help && (
        <>
          <textarea
            aria-label={t("help.noteLabel")}
            placeholder={t("help.notePlaceholder")}
            maxLength={500}
            value={note}
            onChange={(event) => setNote(event.target.value)}
          />
          <button
            type="button"
            className="button"
            disabled={change.isPending}
            onClick={() =>
              change.mutate({ kind: "raise", sessionId: session.id, note }, { onSuccess: () => setNote("") })
            }
          >
            {t("help.ask")}
          </button>
        </>
      )}
      {owner && help && (
        <button
          type="button"
          className="button button-quiet"
          disabled={change.isPending}
          onClick={() => change.mutate({ kind: "lower", sessionId: session.id })}
        >
          {t("help.lower")}
        </button>
      )}
      {!owner && staff && help && help.acknowledgedBy === null && (
        <button
          type="button"
          className="button"
          disabled={change.isPending}
          onClick={() => change.mutate({ kind: "acknowledge", sessionId: session.id })}
        >
          {t("help.acknowledge")}
        </button>
      )}
      {change.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={change.error} />
        </p>
      )}
    </section>
  );
}
