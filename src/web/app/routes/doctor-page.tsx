// /admin/doctor: the doctor's checks, then the capacity feature's panel with the labs' titles.
import { Trans, useTranslation } from "react-i18next";
import type { DoctorCheck } from "../../../common/operations-api.ts";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { useFormat } from "../../lib/i18n/use-format.ts";
import { CapacityPanel } from "../../features/capacity/components/capacity-panel.tsx";
import { useDoctorReport } from "../../features/doctor/api/get-doctor.ts";
import { useDoctorText } from "../../features/doctor/use-doctor-text.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import "../../features/doctor/doctor.css";

/**
 * The doctor's checks, run by the BFF with its own credentials: the same as `npm run doctor`. Each
 * check's texts come as sentences by key, said here in the page's language.
 */
export function DoctorPage() {
  const { t } = useTranslation();
  const format = useFormat();
  const query = useDoctorReport();
  const labTitle = useLabTitles();
  const report = query.data;
  const count = (status: DoctorCheck["status"]) =>
    report?.checks.filter((check) => check.status === status).length ?? 0;

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("doctor.title") })}</title>
      <h1 className="page-title">{t("doctor.title")}</h1>
      <p className="lead">
        <Trans i18nKey="doctor.lead" components={{ command: <code translate="no" /> }} />
      </p>
      {query.isPending ? (
        <Loading label={t("doctor.loading")} />
      ) : !report ? (
        <ErrorPanel title={t("doctor.loadFailed")} error={query.error} onRetry={() => void query.refetch()} />
      ) : (
        <>
          <div className="doctor-summary" data-status={report.status}>
            <p>
              {t("doctor.summary", { fail: count("fail"), warn: count("warn"), ok: count("ok") })}{" "}
              <span className="muted small">
                {t("doctor.checkedAt", { time: format.time(report.checkedAt) })}
              </span>
            </p>
            <button
              type="button"
              className="button"
              disabled={query.isFetching}
              onClick={() => void query.refetch()}
            >
              {query.isFetching ? t("doctor.running") : t("doctor.runAgain")}
            </button>
          </div>
          <ul className="doctor-checks" aria-label={t("doctor.checks")}>
            {report.checks.map((check) => (
              <DoctorCheckItem key={check.id} check={check} />
            ))}
          </ul>
        </>
      )}
      <CapacityPanel labTitle={labTitle} />
    </main>
  );
}

function DoctorCheckItem({ check }: { check: DoctorCheck }) {
  const { t } = useTranslation();
  const say = useDoctorText();
  const { texts } = check;
  // The fix's lines as one text, a line each (as a list param is said), else the BFF's own.
  const fix =
    texts.fix.length > 0 ? say({ key: "verbatim", params: { text: texts.fix } }, check.fix ?? "") : null;
  const titleId = `doctor-${check.id}`;
  return (
    <li
      className="card doctor-check"
      aria-labelledby={titleId}
      data-check={check.id}
      data-status={check.status}
    >
      <header className="doctor-check-header">
        <h2 id={titleId} className="card-title">
          {say(texts.title, check.title)}
        </h2>
        <span className={`doctor-status doctor-status-${check.status}`}>
          {t(`doctor.status.${check.status}`)}
        </span>
      </header>
      <p>{say(texts.summary, check.summary)}</p>
      {texts.details.length > 0 && (
        <ul className="doctor-details">
          {texts.details.map((detail, index) => (
            <li key={index}>{say(detail, check.details[index] ?? "")}</li>
          ))}
        </ul>
      )}
      {fix && (
        <div className="doctor-fix">
          <h3 className="doctor-fix-title">{t("doctor.fix")}</h3>
          <pre>{fix}</pre>
        </div>
      )}
    </li>
  );
}
