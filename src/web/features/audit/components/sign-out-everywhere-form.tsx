import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { ErrorText } from "../../../components/error-text.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useSignOutUser } from "../api/sign-out-user.ts";

/**
 * Ends every sign-in one person made until now, on every replica (POST /api/admin/sign-outs): for a
 * demoted TA, a removed student or a cookie that may have been copied.
 */
export function SignOutEverywhereForm() {
  const { t } = useTranslation();
  const format = useFormat();
  const inputId = useId();
  const headingId = useId();
  const [username, setUsername] = useState("");
  const signOut = useSignOutUser();

  return (
    <section className="audit-sign-out" aria-labelledby={headingId}>
      <h2 id={headingId}>{t("audit.signOut.title")}</h2>
      <p>{t("audit.signOut.lead")}</p>
      <form
        className="audit-actions"
        onSubmit={(event) => {
          event.preventDefault();
          const name = username.trim();
          if (name) signOut.mutate(name, { onSuccess: () => setUsername("") });
        }}
      >
        <div className="field">
          <label className="field-label" htmlFor={inputId}>
            {t("audit.signOut.username")}
          </label>
          <input
            id={inputId}
            value={username}
            autoComplete="off"
            required
            maxLength={200}
            onChange={(event) => setUsername(event.target.value)}
          />
        </div>
        <button type="submit" className="button" disabled={signOut.isPending}>
          {signOut.isPending ? t("audit.signOut.pending") : t("audit.signOut.submit")}
        </button>
      </form>
      <div aria-live="polite">
        {signOut.isSuccess && (
          <p className="notice">
            {t("audit.signOut.done", {
              username: signOut.data.username,
              time: format.dateTime(signOut.data.signedInUpTo),
            })}
          </p>
        )}
        {signOut.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={signOut.error} />
          </p>
        )}
      </div>
    </section>
  );
}
