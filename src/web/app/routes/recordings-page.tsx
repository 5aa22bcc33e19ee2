// /recordings: the console recordings one may replay, including those whose session is gone (the only
// way to them then). Staff see everyone's, filterable by student; students see their own. The lab
// filter and the labs' titles come from the labs feature.
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import { FilterTextField } from "../../components/filter-text-field.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../components/page-state.tsx";
import { isStaff } from "../../lib/roles.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { useUrlFilters } from "../../lib/url-filters.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabSelect } from "../../features/labs/components/lab-select.tsx";
import { useRecordings, type RecordingFilters } from "../../features/recordings/api/get-recordings.ts";
import { RecordingsTable } from "../../features/recordings/components/recordings-table.tsx";
import "../../features/recordings/recordings.css";

export function RecordingsPage() {
  const { t } = useTranslation();
  const staff = isStaff(useSignedInUser().role);
  const [searchParams, setFilters] = useUrlFilters();
  const filters = useMemo(() => readFilters(searchParams, staff), [searchParams, staff]);
  const query = useRecordings(filters);
  const labTitle = useLabTitles();
  const title = staff ? t("recordings.list.title") : t("recordings.list.ownTitle");

  const change = (name: keyof RecordingFilters, value: string) => setFilters({ [name]: value });

  const list = query.data;
  const filtered = filters.lab !== undefined || filters.student !== undefined;

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: title })}</title>
      <h1 className="page-title">{title}</h1>
      <p className="lead">{staff ? t("recordings.list.lead") : t("recordings.list.ownLead")}</p>
      <form
        className="filters"
        role="search"
        aria-label={t("recordings.list.filters")}
        onSubmit={(event) => event.preventDefault()}
      >
        <LabSelect value={filters.lab ?? ""} onChange={(lab) => change("lab", lab)} />
        {staff && (
          <FilterTextField
            label={t("recordings.list.student")}
            placeholder={t("sessions.filters.exactUsername")}
            value={filters.student ?? ""}
            onApply={(student) => change("student", student)}
          />
        )}
      </form>
      {query.isPending ? (
        <Loading label={t("recordings.list.loading")} />
      ) : !list ? (
        <ErrorPanel
          title={t("recordings.list.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {list.items.length === 0 ? (
            <p className="empty">
              {filtered
                ? t("recordings.list.noMatch")
                : staff
                  ? t("recordings.list.none")
                  : t("recordings.list.ownNone")}
            </p>
          ) : (
            <RecordingsTable
              recordings={list.items}
              label={title}
              showStudent={staff}
              labTitle={labTitle}
              busy={query.isPlaceholderData}
            />
          )}
        </>
      )}
    </main>
  );
}

/** A student's `student` in the URL is ignored: their list is their own either way. */
function readFilters(params: URLSearchParams, staff: boolean): RecordingFilters {
  return {
    lab: params.get("lab") || undefined,
    student: (staff && params.get("student")) || undefined,
  };
}
