import { useTranslation } from "react-i18next";
import { oidcSignInPath, type SignInError } from "../../../../common/api.ts";
import { SignInProblem } from "./sign-in-problem.tsx";

/** Sign-in at the organisation's OpenID Connect provider: one button, and why the last try failed. */
export function ProviderSignIn({
  providerName,
  returnPath,
  problem,
}: {
  providerName: string;
  returnPath: string;
  problem: SignInError | undefined;
}) {
  const { t } = useTranslation();
  return (
    <section className="panel sign-in-form" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">{t("auth.signIn.heading")}</h1>
      <p className="muted">{t("auth.signIn.lead")}</p>
      <SignInProblem problem={problem} />
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
