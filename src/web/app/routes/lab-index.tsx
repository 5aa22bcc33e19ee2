// A staff page that lists the labs from the labs feature, each a link to that lab's page of one kind
// (its grading, its class wall).
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { LocalizedLab } from "../../lib/localize-lab.ts";
import { LangText } from "../../components/lang-text.tsx";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { useLabs } from "../../features/labs/api/get-labs.ts";

export function LabIndex({
  title,
  lead,
  linkTo,
  summary,
}: {
  title: string;
  lead: string;
  linkTo: (labId: string) => string;
  /** A line under each lab's title. */
  summary?: (lab: LocalizedLab) => ReactNode;
}) {
  const { t } = useTranslation();
  const labs = useLabs();
  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: title })}</title>
      <h1 className="page-title">{title}</h1>
      <p className="lead">{lead}</p>
      {labs.isPending ? (
        <Loading label={t("labs.catalog.loading")} />
      ) : !labs.data ? (
        <ErrorPanel
          title={t("labs.catalog.loadFailed")}
          error={labs.error}
          onRetry={() => void labs.refetch()}
        />
      ) : labs.data.length === 0 ? (
        <p className="empty">{t("grading.index.empty")}</p>
      ) : (
        <ul className="lab-index-list">
          {labs.data.map((lab) => (
            <li key={lab.id} className="card">
              <h2 className="card-title">
                <Link to={linkTo(lab.id)}>
                  <LangText text={lab.title} />
                </Link>
              </h2>
              {summary && <p className="muted small">{summary(lab)}</p>}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
