import type { Session } from "../../../../common/api.ts";
import type { SelfCheck } from "../../../../common/grading-api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { getErrorMessage, isApiError } from "../../../lib/api-error.ts";
import { useClockText } from "../../../lib/clock.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { useLabs } from "../../labs/api/get-labs.ts";
import { useRunSelfCheck, useSelfChecks } from "../api/self-checks.ts";
import "../grading.css";
import { CheckResults } from "./check-results.tsx";

/**
 * "Check my work" beside the console: the student runs the lab's self-checks on their VM and sees
 * each check pass or fail with its hint; staff see the same history without the button.
 */
export function SelfCheckPanel({ session }: { session: Session }) {
  const me = useSignedInUser();
  const labs = useLabs();
  const selfChecks = labs.data
    ?.find((lab) => lab.id === session.labId)
    ?.checks.filter((check) => check.selfCheck);

  return (
    <section className="panel grading-panel" aria-labelledby="self-check-title">
      <h2 id="self-check-title" className="panel-title">
        Check my work
      </h2>
      {labs.isPending ? (
        <Loading label="Loading the lab's checks…" />
      ) : !selfChecks ? (
        <ErrorPanel title="Could not load the lab" error={labs.error} onRetry={() => void labs.refetch()} />
      ) : selfChecks.length === 0 ? (
        <p className="muted">This lab has no checks you can run yourself; it is graded at the end.</p>
      ) : (
        <>
          <p className="muted small">
            Runs {selfChecks.length === 1 ? "the check" : `the ${selfChecks.length} checks`} marked for
            self-checking on your VM. The other checks are graded when your instructor grades the lab.
          </p>
          {me.username === session.owner && <CheckButton session={session} />}
          <SelfCheckHistory sessionId={session.id} />
        </>
      )}
    </section>
  );
}

function CheckButton({ session }: { session: Session }) {
  const check = useRunSelfCheck(session.id);
  const retryAt =
    isApiError(check.error, 429) && check.error.retryAfterSeconds !== null
      ? check.submittedAt + check.error.retryAfterSeconds * 1000
      : null;
  const waiting = useClockText((now) => (retryAt !== null && now < retryAt ? "wait" : "go")) === "wait";
  const running = session.status === "running";

  return (
    <div className="self-check-action">
      <button
        type="button"
        className="button button-primary"
        disabled={!running || check.isPending || waiting}
        aria-describedby={running ? undefined : "self-check-needs-vm"}
        onClick={() => check.mutate()}
      >
        {check.isPending ? "Checking…" : "Check my work"}
      </button>
      {!running && (
        <p id="self-check-needs-vm" className="muted small">
          Your VM must be running to check your work.
        </p>
      )}
      <div aria-live="polite">
        {check.isPending && <p className="muted small">Running the checks on your VM…</p>}
        {check.isError &&
          (retryAt !== null ? (
            <RetryNotice retryAt={retryAt} />
          ) : (
            <p className="notice notice-error">{getErrorMessage(check.error)}</p>
          ))}
      </div>
    </div>
  );
}

/** The rate limit in plain words, counting down to when the button works again. */
function RetryNotice({ retryAt }: { retryAt: number }) {
  const text = useClockText((now) => {
    const seconds = Math.ceil((retryAt - now) / 1000);
    return seconds > 0
      ? `You checked your work a moment ago. You can check again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`
      : "You can check your work again now.";
  });
  return <p className="notice notice-warning">{text}</p>;
}

function SelfCheckHistory({ sessionId }: { sessionId: string }) {
  const history = useSelfChecks(sessionId);
  if (history.isPending) return <Loading label="Loading earlier checks…" />;
  if (!history.data) {
    return (
      <ErrorPanel
        title="Could not load earlier checks"
        error={history.error}
        onRetry={() => void history.refetch()}
      />
    );
  }
  const [latest, ...earlier] = history.data.items;
  return (
    <>
      <RefreshWarning error={history.error} />
      {!latest ? (
        <p className="empty">No checks yet.</p>
      ) : (
        <section className="grading-latest" aria-labelledby="self-check-latest">
          <h3 id="self-check-latest" className="grading-subtitle">
            Latest check <CheckedAt check={latest} />
          </h3>
          <CheckResults result={latest.result} />
        </section>
      )}
      {earlier.length > 0 && (
        <section aria-labelledby="self-check-earlier">
          <h3 id="self-check-earlier" className="grading-subtitle">
            Earlier checks
          </h3>
          <ol className="self-check-history">
            {earlier.map((item) => (
              <li key={item.id}>
                <details>
                  <summary>
                    <CheckedAt check={item} /> · {summaryOf(item)}
                  </summary>
                  <CheckResults result={item.result} />
                </details>
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  );
}

function CheckedAt({ check }: { check: SelfCheck }) {
  return (
    <time className="muted small" dateTime={check.checkedAt}>
      {new Date(check.checkedAt).toLocaleTimeString()}
    </time>
  );
}

function summaryOf(check: SelfCheck): string {
  const { result } = check;
  return result.gradable ? `${result.score} of ${result.maxScore} points` : "not graded";
}
