import { useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { safeReturnPath } from "../../../lib/paths.ts";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useAuthConfig } from "../api/get-auth-config.ts";
import { useMe } from "../api/get-me.ts";
import { useSignIn } from "../api/sign-in.ts";
import { ProviderSignIn } from "./provider-sign-in.tsx";

export function SignInPage() {
  const [searchParams] = useSearchParams();
  const returnPath = safeReturnPath(searchParams.get("from"));
  const me = useMe();
  const authConfig = useAuthConfig();
  const signIn = useSignIn();
  const navigate = useNavigate();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");

  if (me.data) return <Navigate to={returnPath} replace />;
  if (me.isPending || authConfig.isPending) return <Loading label="Checking your sign-in…" />;
  if (authConfig.isError) {
    return (
      <main className="sign-in">
        <ErrorPanel
          title="Lab Console is not answering"
          error={authConfig.error}
          onRetry={() => void authConfig.refetch()}
        />
      </main>
    );
  }
  if (authConfig.data.mode === "oidc") {
    return (
      <ProviderSignIn
        providerName={authConfig.data.providerName}
        returnPath={returnPath}
        error={searchParams.get("error")}
      />
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
    <main className="sign-in">
      <title>Sign in · Lab Console</title>
      <form className="panel sign-in-form" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Lab Console</h1>
        <p className="muted">Use the account your course gave you.</p>
        <label className="field">
          <span className="field-label">Username</span>
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
          <span className="field-label">Password</span>
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
            {getErrorMessage(signIn.error)}
          </p>
        )}
        <button type="submit" className="button button-primary" disabled={signIn.isPending}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
