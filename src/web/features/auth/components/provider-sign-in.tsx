import { oidcSignInPath, signInErrors, type SignInError } from "../../../../common/api.ts";

const problems: Record<SignInError, string> = {
  cancelled: "Sign-in was cancelled.",
  "no-role": "Your account is not enrolled in Lab Console. Ask your instructor to add you to the course.",
  expired: "The sign-in took too long or was started in another window. Try again.",
  failed: "The sign-in could not be completed. Try again.",
  unavailable: "The sign-in service cannot be reached right now. Try again in a moment.",
};

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
  const problem = signInErrors.find((code) => code === error);
  return (
    <main className="sign-in">
      <title>Sign in · Lab Console</title>
      <section className="panel sign-in-form" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Lab Console</h1>
        <p className="muted">Use the account your course gave you.</p>
        {problem && (
          <p className="notice notice-error" role="alert">
            {problems[problem]}
          </p>
        )}
        {/* A full page load, not a fetch: the browser itself goes to the provider and back. */}
        <a
          className="button button-primary"
          href={`${oidcSignInPath}?${new URLSearchParams({ returnTo: returnPath })}`}
        >
          Sign in with {providerName}
        </a>
      </section>
    </main>
  );
}
