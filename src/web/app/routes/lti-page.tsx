// /lti: the LMSs Lab Console is registered with, the courses launched from them and their rosters,
// and the grades on their way to the LMS gradebooks (docs/lti.md).
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import { LtiScoreState } from "../../../common/lti-api.ts";
import { useUrlFilters } from "../../lib/url-filters.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabSelect } from "../../features/labs/components/lab-select.tsx";
import type { LtiScoreFilters } from "../../features/lti/api/get-scores.ts";
import { CoursesSection } from "../../features/lti/components/courses-section.tsx";
import { PlatformsSection } from "../../features/lti/components/platforms-section.tsx";
import { ScoresSection } from "../../features/lti/components/scores-section.tsx";
import "../../features/lti/lti.css";

export function LtiPage() {
  const { t } = useTranslation();
  const [searchParams, setFilters] = useUrlFilters();
  const filters = useMemo(() => readFilters(searchParams), [searchParams]);
  const labTitle = useLabTitles();
  return (
    <main className="page page-wide lti-page">
      <title>{t("app.pageTitle", { page: t("lti.title") })}</title>
      <h1 className="page-title">{t("lti.title")}</h1>
      <p className="lead">{t("lti.lead")}</p>
      <PlatformsSection />
      <CoursesSection />
      <ScoresSection
        filters={filters}
        onStateChange={(state) => setFilters({ state })}
        labFilter={<LabSelect value={filters.lab ?? ""} onChange={(lab) => setFilters({ lab })} />}
        labTitle={labTitle}
      />
    </main>
  );
}

function readFilters(params: URLSearchParams): LtiScoreFilters {
  const state = LtiScoreState.safeParse(params.get("state"));
  return {
    lab: params.get("lab") || undefined,
    state: state.success ? state.data : undefined,
  };
}
