// /sessions: the staff's table of every session, with the labs feature's lab filter and titles and
// the help feature's raised hands.
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import { Link, useSearchParams } from "react-router";
import { SessionStatus } from "../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../components/page-state.tsx";
import { paths } from "../../lib/paths.ts";
import { useUrlFilters } from "../../lib/url-filters.ts";
import { HandBadge } from "../../features/help/components/hand-badge.tsx";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabSelect } from "../../features/labs/components/lab-select.tsx";
import { useSessions, type SessionFilters } from "../../features/sessions/api/get-sessions.ts";
import { StaleNotice } from "../../features/sessions/components/stale-notice.tsx";
import {
  SessionFilterBar,
  type SessionFilterValues,
} from "../../features/sessions/components/session-filter-bar.tsx";
import { SessionsTable } from "../../features/sessions/components/sessions-table.tsx";
import { StatusCounts } from "../../features/sessions/components/status-counts.tsx";

const pageSize = 50;

/** TAs' and instructors' live view of every session, filtered and paged on the server. */
export function SessionsPage() {
  const { t } = useTranslation();
  const [searchParams, setFilters] = useUrlFilters();
  const [, setSearchParams] = useSearchParams();
  const values = useMemo(() => readFilterValues(searchParams), [searchParams]);
  const page = readPage(searchParams);
  const filters: SessionFilters = {
    lab: values.lab || undefined,
    status: values.status || undefined,
    owner: values.student || undefined,
    page,
    pageSize,
  };
  const query = useSessions(filters);
  const labTitle = useLabTitles();

  const goToPage = (nextPage: number) =>
    setSearchParams((current) => {
      const next = new URLSearchParams(current);
      if (nextPage > 1) next.set("page", String(nextPage));
      else next.delete("page");
      return next;
    });

  const list = query.data;
  const pageCount = list ? Math.max(1, Math.ceil(list.total / list.pageSize)) : 1;

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("sessions.page.title") })}</title>
      <h1 className="page-title">{t("sessions.page.title")}</h1>
      <SessionFilterBar
        values={values}
        labFilter={<LabSelect value={values.lab} onChange={(lab) => setFilters({ lab })} />}
        onChange={setFilters}
      />
      {values.lab && (
        <p>
          <Link to={paths.labWall.to(values.lab)}>{t("wall.open")}</Link>
        </p>
      )}
      {query.isPending ? (
        <Loading label={t("sessions.page.loading")} />
      ) : !list ? (
        <ErrorPanel
          title={t("sessions.page.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <StaleNotice list={list} />
          <StatusCounts list={list} />
          {list.items.length === 0 ? (
            <p className="empty">{t("sessions.page.noMatch")}</p>
          ) : (
            <SessionsTable
              sessions={list.items}
              labTitle={labTitle}
              HelpBadge={HandBadge}
              busy={query.isPlaceholderData}
            />
          )}
          <nav className="pager" aria-label={t("sessions.page.pager")}>
            <button type="button" className="button" disabled={page <= 1} onClick={() => goToPage(page - 1)}>
              {t("sessions.page.previous")}
            </button>
            <span>{t("sessions.page.pageOf", { page: Math.min(page, pageCount), total: pageCount })}</span>
            <button
              type="button"
              className="button"
              disabled={page >= pageCount}
              onClick={() => goToPage(page + 1)}
            >
              {t("sessions.page.next")}
            </button>
          </nav>
        </>
      )}
    </main>
  );
}

function readFilterValues(searchParams: URLSearchParams): SessionFilterValues {
  const status = SessionStatus.safeParse(searchParams.get("status"));
  return {
    lab: searchParams.get("lab") ?? "",
    status: status.success ? status.data : "",
    student: searchParams.get("student") ?? "",
  };
}

function readPage(searchParams: URLSearchParams): number {
  const page = Number(searchParams.get("page") ?? "1");
  return Number.isInteger(page) && page >= 1 ? page : 1;
}
