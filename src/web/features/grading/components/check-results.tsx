import { Trans, useTranslation } from "react-i18next";
import type { CheckOutcome, CheckResult, SessionResult } from "../../../../common/grading.ts";
import { LangText } from "../../../components/lang-text.tsx";
import { english, pickTranslation } from "../../../lib/i18n/pick-translation.ts";
import { useLanguage } from "../../../lib/i18n/use-language.ts";

/** One grade: the score, or why there is none, and every check with its points, hint and output. */
export function CheckResults({ result }: { result: SessionResult }) {
  const { t } = useTranslation();
  if (!result.gradable) {
    return (
      <p className="notice notice-warning">
        <Trans
          i18nKey="grading.result.notGraded"
          components={{ reason: <LangText text={english(result.reason)} /> }}
        />
      </p>
    );
  }
  return (
    <>
      <p className="grading-score">
        <strong>{t("grading.result.score", { score: result.score, count: result.maxScore })}</strong>
        {" · "}
        {t("grading.result.passed", { passed: passedCount(result.checks), count: result.checks.length })}
      </p>
      <ul className="check-list">
        {result.checks.map((check) => (
          <CheckItem key={check.checkId} check={check} />
        ))}
      </ul>
    </>
  );
}

function CheckItem({ check }: { check: CheckResult }) {
  const { t } = useTranslation();
  const { language } = useLanguage();
  return (
    <li className="check-item" data-passed={check.passed}>
      <div className="check-heading">
        <span className={`check-badge ${check.passed ? "check-passed" : "check-failed"}`}>
          {check.passed
            ? t("grading.check.passed")
            : check.points > 0
              ? t("grading.check.partly")
              : t("grading.check.failed")}
        </span>
        <span className="check-title">
          <LangText text={pickTranslation(check.title, check.translations?.title, language)} />
        </span>
        <span className="check-points">
          {t("grading.check.points", { points: check.points, count: check.maxPoints })}
        </span>
      </div>
      {!check.passed && (
        <p className="check-message">
          <CheckMessage check={check} />
        </p>
      )}
      {check.outputExcerpt !== "" && (
        <details className="check-output">
          <summary>{t("grading.check.output")}</summary>
          <pre translate="no">{check.outputExcerpt}</pre>
        </details>
      )}
    </li>
  );
}

/** Why a check fell short and the lab's hint. Results recorded before outcomes existed have only English. */
function CheckMessage({ check }: { check: CheckResult }) {
  const { language } = useLanguage();
  const outcome = useOutcomeText();
  if (!check.outcome) return <LangText text={english(check.message)} />;
  return (
    <>
      {outcome(check.outcome)}
      {check.hint !== undefined && (
        <>
          {" "}
          <Trans
            i18nKey="grading.check.hint"
            components={{
              hint: <LangText text={pickTranslation(check.hint, check.translations?.hint, language)} />,
            }}
          />
        </>
      )}
    </>
  );
}

/** A check's outcome in words, also for places that take plain text (a cell's tooltip). */
export function useOutcomeText(): (outcome: CheckOutcome) => string {
  const { t } = useTranslation();
  return (outcome) => {
    switch (outcome.kind) {
      case "passed":
        return t("grading.outcome.passed");
      case "timed-out":
        return t("grading.outcome.timedOut", { seconds: outcome.seconds });
      case "partial":
        return t("grading.outcome.partial", { percent: outcome.percent });
      case "scored-zero":
        return t("grading.outcome.scoredZero");
      case "signal":
        return outcome.signal
          ? t("grading.outcome.signal", { signal: outcome.signal })
          : t("grading.outcome.someSignal");
      case "exit":
        return t("grading.outcome.exit", { code: outcome.code });
    }
  };
}

function passedCount(checks: readonly CheckResult[]): number {
  return checks.filter((check) => check.passed).length;
}
