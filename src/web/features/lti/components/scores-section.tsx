import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import {
  ltiScoreStates,
  type LtiScore,
  type LtiScoreList,
  type LtiScoreState,
} from "../../../../common/lti-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { SelectField } from "../../../components/select-field.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useLtiScores, useRetryLtiScore, type LtiScoreFilters } from "../api/get-scores.ts";
import { gradebookStandings, type GradebookStanding } from "../lib/gradebook-standing.ts";
import { lastErrorOf } from "../lib/lms-refusal.ts";
import { formatScore, scoreProgress } from "../lib/score-text.ts";

/** The grades outbox: what is on its way to the LMS gradebooks, what arrived, and what an LMS refused and why. */
export function ScoresSection({
  filters,
  onStateChange,
  labFilter,
  labTitle,
}: {
  filters: LtiScoreFilters;
  onStateChange: (state: LtiScoreState | "") => void;
  /** The lab filter field, bound to `filters.lab` by the page. */
  labFilter: ReactNode;
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();
  const query = useLtiScores(filters);
  const list = query.data;
  const filtered = filters.lab !== undefined || filters.state !== undefined;
  return (
    <section className="section" aria-labelledby="lti-scores-title">
      <h2 id="lti-scores-title" className="section-title">
        {t("lti.scores.title")}
      </h2>
      <p className="muted">{t("lti.scores.lead")}</p>
      <form
        className="filters"
        role="search"
        aria-label={t("lti.scores.filters")}
        onSubmit={(event) => event.preventDefault()}
      >
        {labFilter}
        <SelectField
          label={t("lti.scores.state")}
          value={filters.state ?? ""}
          anyLabel={t("lti.scores.anyState")}
          options={ltiScoreStates.map((state) => ({ value: state, label: t(`lti.scores.states.${state}`) }))}
          onChange={onStateChange}
        />
      </form>
      {query.isPending ? (
        <Loading label={t("lti.scores.loading")} />
      ) : !list ? (
        <ErrorPanel
          title={t("lti.scores.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <ScoreCounts counts={list.counts} />
          {list.items.length > 0 ? (
            <ScoreTable scores={list.items} busy={query.isPlaceholderData} labTitle={labTitle} />
          ) : (
            <p className="empty">{filtered ? t("lti.scores.noMatch") : t("lti.scores.none")}</p>
          )}
        </>
      )}
    </section>
  );
}

function ScoreCounts({ counts }: { counts: LtiScoreList["counts"] }) {
  const { t } = useTranslation();
  const format = useFormat();
  return (
    <ul className="counts" aria-label={t("lti.scores.counts")}>
      {ltiScoreStates.map((state) => (
        <li key={state} className={`count lti-count-${state}`} data-state={state}>
          <span className="count-label">{t(`lti.scores.states.${state}`)}</span>{" "}
          <span className="count-value">{format.number(counts[state])}</span>
        </li>
      ))}
    </ul>
  );
}

function ScoreTable({
  scores,
  busy,
  labTitle,
}: {
  scores: LtiScore[];
  busy: boolean;
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();
  const format = useFormat();
  const retry = useRetryLtiScore();
  const standings = gradebookStandings(scores);
  return (
    <>
      <div className="table-scroll">
        <table className="table lti-scores" aria-label={t("lti.scores.table")} aria-busy={busy}>
          <thead>
            <tr>
              <th scope="col">{t("lti.scores.student")}</th>
              <th scope="col">{t("lti.scores.state")}</th>
              <th scope="col">{t("lti.scores.score")}</th>
              <th scope="col">{t("lti.scores.lab")}</th>
              <th scope="col">{t("lti.scores.course")}</th>
              <th scope="col">{t("lti.scores.source")}</th>
            </tr>
          </thead>
          <tbody>
            {scores.map((score) => {
              const standing = standings.get(score.id);
              const sending = retry.isPending && retry.variables === score.id;
              return (
                <tr key={score.id} data-score={score.id} data-state={score.state} data-standing={standing}>
                  <th scope="row" translate="no">
                    {score.student}
                  </th>
                  <td className="lti-wrap">
                    <ScoreState score={score} standing={standing} />
                    {score.state === "refused" && standing !== "replaced" && (
                      <button
                        type="button"
                        className="button lti-retry"
                        disabled={sending}
                        onClick={() => retry.mutate(score.id)}
                      >
                        {sending ? t("lti.scores.sending") : t("lti.scores.sendAgain")}
                      </button>
                    )}
                  </td>
                  <td>{formatScore(score, format.number)}</td>
                  <td>
                    <LangText text={labTitle(score.labId)} />
                  </td>
                  <td>
                    <span translate="no">{score.courseTitle ?? t("lti.courses.untitled")}</span>
                    <span className="muted small lti-block" translate="no">
                      {score.platformName}
                    </span>
                  </td>
                  <td>
                    {t(`lti.scores.sources.${score.source}`)}
                    <span className="muted small lti-block">
                      {t("lti.scores.gradedAt", { time: format.dateTime(score.gradedAt) })}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {retry.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={retry.error} />
        </p>
      )}
    </>
  );
}

function ScoreState({ score, standing }: { score: LtiScore; standing: GradebookStanding | undefined }) {
  const { t } = useTranslation();
  const format = useFormat();
  const progress = scoreProgress(score);
  return (
    <div className="lti-state">
      <span className={`status-badge lti-state-${score.state}`}>{t(`lti.scores.states.${score.state}`)}</span>
      {standing && (
        <span className={`lti-standing lti-standing-${standing}`}>
          {t(`lti.scores.standings.${standing}`)}
        </span>
      )}
      {progress.kind === "posted" && progress.at && (
        <span className="muted small">
          {t("lti.scores.postedAt", { time: format.dateTime(progress.at) })}
        </span>
      )}
      {progress.kind === "next-attempt" && (
        <span className="muted small">
          {score.attempts > 0
            ? t("lti.scores.retryAt", { time: format.dateTime(progress.at), count: score.attempts })
            : t("lti.scores.nextAttempt", { time: format.dateTime(progress.at) })}
        </span>
      )}
      {progress.kind === "queued" && <span className="muted small">{t("lti.scores.queued")}</span>}
      {score.lastError && score.state !== "posted" && (
        <LastErrorText
          score={score}
          lastError={score.lastError}
          // Refused and still the newest: the instructor can do something about it.
          actionable={score.state === "refused" && standing !== "replaced"}
        />
      )}
    </div>
  );
}

/**
 * Why the LMS refused a score, in its own words, or why the last attempt failed. A refusal the
 * instructor can act on says how.
 */
function LastErrorText({
  score,
  lastError,
  actionable,
}: {
  score: LtiScore;
  lastError: string;
  actionable: boolean;
}) {
  const { t } = useTranslation();
  const error = lastErrorOf(lastError);
  return (
    <>
      <span className={score.state === "refused" ? "lti-lms-reason" : "muted small lti-lms-reason"}>
        {error.kind === "other" ? (
          <>
            {t("lti.scores.lastAttempt")} <q translate="no">{error.text}</q>
          </>
        ) : error.reason === null ? (
          t("lti.scores.refusedWithoutReason", { lms: score.platformName, status: error.status })
        ) : (
          <>
            {t("lti.scores.refusedBy", { lms: score.platformName })} <q translate="no">{error.reason}</q>
          </>
        )}
      </span>
      {actionable && <span className="muted small">{t("lti.scores.refusedHint")}</span>}
    </>
  );
}
