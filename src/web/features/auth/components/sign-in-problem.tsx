import { useTranslation } from "react-i18next";
import { signInErrors, type SignInError } from "../../../../common/api.ts";

/** The `error` the console put in the address when it sent the browser back here, if it is one this page knows. */
export function signInProblemOf(error: string | null): SignInError | undefined {
  return signInErrors.find((code) => code === error);
}

/** Why the last sign-in (at the provider, or a launch from an LMS) did not sign the person in. */
export function SignInProblem({ problem }: { problem: SignInError | undefined }) {
  const { t } = useTranslation();
  if (!problem) return null;
  return (
    <p className="notice notice-error" role="alert" data-problem={problem}>
      {t(`auth.signIn.problem.${problem}`)}
    </p>
  );
}
