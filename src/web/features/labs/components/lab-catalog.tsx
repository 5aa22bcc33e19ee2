import type { ReactNode } from "react";
import type { LabSummary } from "../../../../common/api.ts";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useLabs } from "../api/get-labs.ts";
import { LabCard } from "./lab-card.tsx";

export function LabCatalog({ renderAction }: { renderAction: (lab: LabSummary) => ReactNode }) {
  const labs = useLabs();

  return (
    <section className="section" aria-labelledby="lab-catalog-title">
      <h2 id="lab-catalog-title" className="section-title">
        Labs
      </h2>
      {labs.isPending ? (
        <Loading label="Loading labs…" />
      ) : labs.isError ? (
        <ErrorPanel title="Could not load the labs" error={labs.error} onRetry={() => void labs.refetch()} />
      ) : labs.data.length === 0 ? (
        <p className="empty">No labs are published yet. Your instructor adds them.</p>
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
