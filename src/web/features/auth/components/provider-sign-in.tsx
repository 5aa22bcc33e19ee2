import { useTranslation } from "react-i18next";
import { oidcSignInPath, signInErrors } from "../../../../common/api.ts";

/** Sign-in at the organisation's OpenID Connect provider: one button, and why the last try failed. */
export function ProviderSignIn({
  providerName,
  returnPath,
  error,
}: {
  providerName: string;
  returnPath: string;
  /** The `error` the console put in the address when it sent the browser back here. */
  error: string | null;
}) {
  const { t } = useTranslation();
  const problem = signInErrors.find((code) => code === error);
  return (
    <section className="panel sign-in-form" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">{t("auth.signIn.heading")}</h1>
      <p className="muted">{t("auth.signIn.lead")}</p>
      {problem && (
        <p className="notice notice-error" role="alert">
          {t(`auth.signIn.problem.${problem}`)}
        </p>
      )}
      {/* A full page load, not a fetch: the browser itself goes to the provider and back. */}
      <a
        className="button button-primary"
        href={`${oidcSignInPath}?${new URLSearchParams({ returnTo: returnPath })}`}
      >
        {t("auth.signIn.withProvider", { provider: providerName })}
      </a>
    </section>
  );
}
