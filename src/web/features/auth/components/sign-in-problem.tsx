import { useTranslation } from "react-i18next";
import { signInErrors, type SignInError } from "../../../../common/api.ts";

/** The `error` the console put in the address when it sent the browser back here, if it is one this page knows. */
export function signInProblemOf(error: string | null): SignInError | undefined {
  return signInErrors.find((code) => code === error);
}

const launchProblems = ["lti-refused", "lti-platform-pending", "lti-platform-unknown"] as const;
export type LaunchProblem = (typeof launchProblems)[number];

/**
 * A launch from an LMS that did not sign the person in. Their way in is the LMS, not a password: the
 * page shows no sign-in form then, so a student does not type their LMS password into it.
 */
export function isLaunchProblem(problem: SignInError | undefined): problem is LaunchProblem {
  return launchProblems.some((each) => each === problem);
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

/** The whole page after a refused launch from an LMS: why, and where to go instead of a sign-in form. */
export function LaunchProblemPanel({ problem }: { problem: LaunchProblem }) {
  const { t } = useTranslation();
  return (
    <section className="panel sign-in-form" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">{t("auth.signIn.launchProblem.heading")}</h1>
      <SignInProblem problem={problem} />
      <p>{t("auth.signIn.launchProblem.openAgain")}</p>
    </section>
  );
}
