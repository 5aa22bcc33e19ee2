import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useLabs } from "../api/get-labs.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { paths } from "../../../lib/paths.ts";
import { LabCard } from "./lab-card.tsx";

/**
 * `only`: one lab's card, with a link to the others (a launch from an LMS course names its lab; the
 * others are not that course's work). A lab id that is not in the catalog shows the whole catalog.
 */
export function LabCatalog({
  renderAction,
  only,
}: {
  renderAction: (lab: LocalizedLab) => ReactNode;
  only?: string | null;
}) {
  const { t } = useTranslation();
  const labs = useLabs();
  const focused = labs.data?.filter((lab) => lab.id === only);
  const shown = focused?.length ? focused : labs.data;

  return (
    <section className="section" aria-labelledby="lab-catalog-title">
      <h2 id="lab-catalog-title" className="section-title">
        {t("labs.catalog.title")}
      </h2>
      {labs.isPending ? (
        <Loading label={t("labs.catalog.loading")} />
      ) : labs.isError ? (
        <ErrorPanel
          title={t("labs.catalog.loadFailed")}
          error={labs.error}
          onRetry={() => void labs.refetch()}
        />
      ) : !shown?.length ? (
        <p className="empty">{t("labs.catalog.empty")}</p>
      ) : (
        <>
          <div className="lab-grid">
            {shown.map((lab) => (
              <LabCard key={lab.id} lab={lab} action={renderAction(lab)} />
            ))}
          </div>
          {shown !== labs.data && (
            <p>
              <Link to={paths.home.to()}>
                {t("labs.catalog.showOthers", { count: labs.data.length - shown.length })}
              </Link>
            </p>
          )}
        </>
      )}
    </section>
  );
}
