import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useLabs } from "../api/get-labs.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { LabCard } from "./lab-card.tsx";

export function LabCatalog({ renderAction }: { renderAction: (lab: LocalizedLab) => ReactNode }) {
  const { t } = useTranslation();
  const labs = useLabs();

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
      ) : labs.data.length === 0 ? (
        <p className="empty">{t("labs.catalog.empty")}</p>
      ) : (
        <div className="lab-grid">
          {labs.data.map((lab) => (
            <LabCard key={lab.id} lab={lab} action={renderAction(lab)} />
          ))}
        </div>
      )}
    </section>
  );
}
