import type { UseQueryResult } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import type { SelfCheck } from "../../../../common/grading-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { isApiError } from "../../../lib/api-error.ts";
import { useClockText } from "../../../lib/clock.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { useRunSelfCheck, useSelfChecks } from "../api/self-checks.ts";
import "../grading.css";
import { CheckResults } from "./check-results.tsx";

/**
 * "Check my work" beside the console: the student runs the lab's self-checks on their VM and sees
 * each check pass or fail with its hint; staff see the same history without the button. `labs` is the
 * catalog, where the lab's self-checks are listed.
 */
export function SelfCheckPanel({
  session,
  labs,
}: {
  session: Session;
  labs: UseQueryResult<LocalizedLab[]>;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const selfChecks = labs.data
    ?.find((lab) => lab.id === session.labId)
    ?.checks.filter((check) => check.selfCheck);

  return (
    <section className="panel grading-panel" aria-labelledby="self-check-title">
      <h2 id="self-check-title" className="panel-title">
        {t("grading.self.title")}
      </h2>
      {labs.isPending ? (
        <Loading label={t("grading.self.loadingChecks")} />
      ) : !selfChecks ? (
        <ErrorPanel
          title={t("grading.page.labLoadFailed")}
          error={labs.error}
          onRetry={() => void labs.refetch()}
        />
      ) : selfChecks.length === 0 ? (
        <p className="muted">{t("grading.self.none")}</p>
      ) : (
        <>
          <p className="muted small">{t("grading.self.explain", { count: selfChecks.length })}</p>
          {me.username === session.owner && <CheckButton session={session} />}
          <SelfCheckHistory sessionId={session.id} />
        </>
      )}
    </section>
  );
}

function CheckButton({ session }: { session: Session }) {
  const { t } = useTranslation();
  const check = useRunSelfCheck(session.id);
  const retryAt =
    isApiError(check.error, 429) && check.error.retryAfterSeconds !== null
      ? check.submittedAt + check.error.retryAfterSeconds * 1000
      : null;
  const waiting = useClockText((now) => (retryAt !== null && now < retryAt ? "wait" : "go")) === "wait";
  const running = session.status === "running";
  const result = check.data?.result;

  return (
    <div className="self-check-action">
      <button
        type="button"
        className="button button-primary"
        disabled={!running || check.isPending || waiting}
        aria-describedby={running ? undefined : "self-check-needs-vm"}
        onClick={() => check.mutate()}
      >
        {check.isPending ? t("grading.self.pending") : t("grading.self.button")}
      </button>
      {!running && (
        <p id="self-check-needs-vm" className="muted small">
          {t("grading.self.needsVm")}
        </p>
      )}
      <div aria-live="polite">
        {check.isPending && <p className="muted small">{t("grading.self.running")}</p>}
        {/* The result itself shows below; this says it once for screen readers, as it arrives. */}
        {check.isSuccess && result && (
          <p className="visually-hidden">
            {result.gradable
              ? t("grading.self.announceScore", { score: result.score, count: result.maxScore })
              : t("grading.self.announceNotGraded")}
          </p>
        )}
        {check.isError &&
          (retryAt !== null ? (
            <RetryNotice retryAt={retryAt} />
          ) : (
            <p className="notice notice-error">
              <ErrorText error={check.error} />
            </p>
          ))}
      </div>
    </div>
  );
}

/** The rate limit in plain words, counting down to when the button works again. */
function RetryNotice({ retryAt }: { retryAt: number }) {
  const { t } = useTranslation();
  const text = useClockText((now) => {
    const seconds = Math.ceil((retryAt - now) / 1000);
    return seconds > 0 ? t("grading.self.tooSoon", { count: seconds }) : t("grading.self.again");
  });
  return <p className="notice notice-warning">{text}</p>;
}

function SelfCheckHistory({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const history = useSelfChecks(sessionId);
  if (history.isPending) return <Loading label={t("grading.self.loadingHistory")} />;
  if (!history.data) {
    return (
      <ErrorPanel
        title={t("grading.self.historyFailed")}
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
        <p className="empty">{t("grading.self.noChecks")}</p>
      ) : (
        <section className="grading-latest" aria-labelledby="self-check-latest">
          <h3 id="self-check-latest" className="grading-subtitle">
            {t("grading.self.latest")} <CheckedAt check={latest} />
          </h3>
          <CheckResults result={latest.result} />
        </section>
      )}
      {earlier.length > 0 && (
        <section aria-labelledby="self-check-earlier">
          <h3 id="self-check-earlier" className="grading-subtitle">
            {t("grading.self.earlier")}
          </h3>
          <ol className="self-check-history">
            {earlier.map((item) => (
              <li key={item.id}>
                <details>
                  <summary>
                    <CheckedAt check={item} /> · <CheckSummary check={item} />
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
  const format = useFormat();
  return (
    <time className="muted small" dateTime={check.checkedAt}>
      {format.time(check.checkedAt)}
    </time>
  );
}

function CheckSummary({ check }: { check: SelfCheck }) {
  const { t } = useTranslation();
  const { result } = check;
  return result.gradable
    ? t("grading.result.score", { score: result.score, count: result.maxScore })
    : t("grading.result.notGradedShort");
}
