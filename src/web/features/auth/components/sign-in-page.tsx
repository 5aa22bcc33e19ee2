import { useState, type FormEvent, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link, Navigate, useNavigate, useSearchParams } from "react-router";
import { ErrorText } from "../../../components/error-text.tsx";
import { LanguageSwitcher } from "../../../components/language-switcher.tsx";
import { safeReturnPath } from "../../../lib/paths.ts";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useAuthConfig } from "../api/get-auth-config.ts";
import { useMe } from "../api/get-me.ts";
import { useSignIn } from "../api/sign-in.ts";
import { ProviderSignIn } from "./provider-sign-in.tsx";
import { isLaunchProblem, LaunchProblemPanel, SignInProblem, signInProblemOf } from "./sign-in-problem.tsx";

export function SignInPage() {
  const { t } = useTranslation();
  const [searchParams] = useSearchParams();
  const returnPath = safeReturnPath(searchParams.get("from"));
  const me = useMe();
  const authConfig = useAuthConfig();
  const signIn = useSignIn();
  const navigate = useNavigate();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");

  const problem = signInProblemOf(searchParams.get("error"));

  // Someone already signed in whose launch from an LMS was refused still needs to hear why.
  if (me.data && problem) {
    return (
      <SignInLayout>
        <section className="panel sign-in-form" aria-labelledby="sign-in-title">
          <h1 id="sign-in-title">{t("auth.signIn.notSignedInAgain")}</h1>
          <SignInProblem problem={problem} />
          <Link className="button button-primary" to={returnPath} replace>
            {t("auth.signIn.continueAs", { username: me.data.username })}
          </Link>
        </section>
      </SignInLayout>
    );
  }
  if (me.data) return <Navigate to={returnPath} replace />;
  if (me.isPending) return <Loading label={t("auth.signIn.checking")} />;
  if (isLaunchProblem(problem)) {
    return (
      <SignInLayout>
        <LaunchProblemPanel problem={problem} />
      </SignInLayout>
    );
  }
  if (authConfig.isPending) return <Loading label={t("auth.signIn.checking")} />;
  if (authConfig.isError) {
    return (
      <SignInLayout>
        <ErrorPanel
          title={t("auth.notAnswering")}
          error={authConfig.error}
          onRetry={() => void authConfig.refetch()}
        />
      </SignInLayout>
    );
  }
  if (authConfig.data.mode === "oidc") {
    return (
      <SignInLayout>
        <ProviderSignIn
          providerName={authConfig.data.providerName}
          returnPath={returnPath}
          problem={problem}
        />
      </SignInLayout>
    );
  }

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    signIn.mutate(
      { username: username.trim(), password },
      { onSuccess: () => navigate(returnPath, { replace: true }) },
    );
  };

  return (
    <SignInLayout>
      <form className="panel sign-in-form" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">{t("auth.signIn.heading")}</h1>
        <p className="muted">{t("auth.signIn.lead")}</p>
        <SignInProblem problem={problem} />
        <label className="field">
          <span className="field-label">{t("auth.signIn.username")}</span>
          <input
            name="username"
            autoComplete="username"
            required
            maxLength={64}
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        </label>
        <label className="field">
          <span className="field-label">{t("auth.signIn.password")}</span>
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            maxLength={256}
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        {signIn.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={signIn.error} overrides={{ unauthenticated: t("auth.signIn.wrongPassword") }} />
          </p>
        )}
        <button type="submit" className="button button-primary" disabled={signIn.isPending}>
          {signIn.isPending ? t("auth.signIn.pending") : t("auth.signIn.submit")}
        </button>
      </form>
    </SignInLayout>
  );
}

/** The sign-in page's frame: no header here, so the language switcher sits above the form. */
function SignInLayout({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <main className="sign-in">
      <title>{t("app.pageTitle", { page: t("auth.signIn.title") })}</title>
      <div className="sign-in-language">
        <LanguageSwitcher />
      </div>
      {children}
    </main>
  );
}
