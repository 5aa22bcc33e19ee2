import { useTranslation } from "react-i18next";
import { LangText } from "../../../components/lang-text.tsx";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { LabDescription } from "./lab-description.tsx";
import { labPoints } from "../../../../common/lab.ts";

/**
 * The lab's tasks beside its console, from the moment the session opens: what to do, what each is
 * worth, and which "Check my work" runs (the others wait for the instructor's grading).
 */
export function LabTasks({ lab }: { lab: LocalizedLab }) {
  const { t } = useTranslation();
  const points = labPoints(lab);
  return (
    <section className="panel lab-tasks" aria-labelledby="lab-tasks-title">
      <h2 id="lab-tasks-title" className="panel-title">
        {t("labs.tasks.title")}
      </h2>
      <LabDescription source={lab.description} headingLevel={3} />
      {lab.checks.length === 0 ? (
        <p className="muted">{t("labs.tasks.none")}</p>
      ) : (
        <>
          <p className="muted small">{t("labs.tasks.total", { count: lab.checks.length, points })}</p>
          <ol className="lab-task-list">
            {lab.checks.map((check) => (
              <li key={check.id}>
                <span className="lab-task-title">
                  <LangText text={check.title} />
                </span>
                <span className="lab-task-facts">
                  <span>{t("labs.tasks.points", { count: check.points })}</span>
                  <span>{check.selfCheck ? t("labs.tasks.selfCheck") : t("labs.tasks.gradedLater")}</span>
                </span>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
