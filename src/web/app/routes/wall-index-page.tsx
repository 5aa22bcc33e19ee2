// /wall: the labs from the labs feature, each a link to its class wall (where announcements are sent).
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { LangText } from "../../components/lang-text.tsx";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { paths } from "../../lib/paths.ts";
import { useLabs } from "../../features/labs/api/get-labs.ts";
import "../../features/grading/grading.css";

/** Staff pick the lab whose class wall to watch. */
export function WallIndexPage() {
  const { t } = useTranslation();
  const labs = useLabs();
  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("wall.index.title") })}</title>
      <h1 className="page-title">{t("wall.index.title")}</h1>
      <p className="lead">{t("wall.index.lead")}</p>
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
        <ul className="grading-lab-list">
          {labs.data.map((lab) => (
            <li key={lab.id} className="card">
              <h2 className="card-title">
                <Link to={paths.labWall.to(lab.id)}>
                  <LangText text={lab.title} />
                </Link>
              </h2>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
