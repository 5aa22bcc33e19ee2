// /admin/audit: the audit log, filtered by lab with the labs feature's select and titles.
import { useId, useMemo } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { AuditAction, auditActions, type AuditEntry } from "../../../common/operations-api.ts";
import { FilterTextField } from "../../components/filter-text-field.tsx";
import { LangText } from "../../components/lang-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../components/page-state.tsx";
import type { LocalText } from "../../lib/i18n/pick-translation.ts";
import { useFormat } from "../../lib/i18n/use-format.ts";
import { paths } from "../../lib/paths.ts";
import { useUrlFilters } from "../../lib/url-filters.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabSelect } from "../../features/labs/components/lab-select.tsx";
import { auditSearch, useAuditLog, type AuditFilters } from "../../features/audit/api/get-audit.ts";
import { SignOutEverywhereForm } from "../../features/audit/components/sign-out-everywhere-form.tsx";
import "../../features/audit/audit.css";

/** Who did what, when and from where: filtered by the URL, newest first, exportable as JSON lines. */
export function AuditPage() {
  const { t } = useTranslation();
  const [searchParams, setFilters] = useUrlFilters();
  const filters = useMemo(() => readFilters(searchParams), [searchParams]);
  const query = useAuditLog(filters);
  const labTitle = useLabTitles();
  const entries = query.data?.pages.flatMap((page) => page.items) ?? [];

  const change = (name: keyof AuditFilters, value: string) => setFilters({ [name]: value });

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("audit.title") })}</title>
      <h1 className="page-title">{t("audit.title")}</h1>
      <p className="lead">{t("audit.lead")}</p>
      <AuditFilterBar filters={filters} onChange={change} />
      <div className="audit-actions">
        <a className="button" href={`/api/audit/export?${auditSearch(filters)}`} download>
          {t("audit.export")}
        </a>
      </div>
      {query.isPending ? (
        <Loading label={t("audit.loading")} />
      ) : query.isError && !query.data ? (
        <ErrorPanel title={t("audit.loadFailed")} error={query.error} onRetry={() => void query.refetch()} />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {entries.length === 0 ? (
            <p className="empty">{t("audit.noMatch")}</p>
          ) : (
            <AuditTable entries={entries} labTitle={labTitle} />
          )}
          {query.hasNextPage && (
            <button
              type="button"
              className="button"
              disabled={query.isFetchingNextPage}
              onClick={() => void query.fetchNextPage()}
            >
              {query.isFetchingNextPage ? t("audit.loadingMore") : t("audit.loadMore")}
            </button>
          )}
        </>
      )}
      <SignOutEverywhereForm />
    </main>
  );
}

function readFilters(params: URLSearchParams): AuditFilters {
  const action = AuditAction.safeParse(params.get("action"));
  return {
    user: params.get("user") || undefined,
    action: action.success ? action.data : undefined,
    session: params.get("session") || undefined,
    lab: params.get("lab") || undefined,
  };
}

function AuditFilterBar({
  filters,
  onChange,
}: {
  filters: AuditFilters;
  onChange: (name: keyof AuditFilters, value: string) => void;
}) {
  const { t } = useTranslation();
  const actionId = useId();
  return (
    <form
      className="filters"
      role="search"
      aria-label={t("audit.filters.label")}
      onSubmit={(event) => event.preventDefault()}
    >
      <FilterTextField
        label={t("audit.filters.person")}
        placeholder={t("sessions.filters.exactUsername")}
        value={filters.user ?? ""}
        onApply={(value) => onChange("user", value)}
      />
      <div className="field">
        <label className="field-label" htmlFor={actionId}>
          {t("audit.filters.action")}
        </label>
        <select
          id={actionId}
          value={filters.action ?? ""}
          onChange={(event) => onChange("action", event.target.value)}
        >
          <option value="">{t("audit.filters.anyAction")}</option>
          {auditActions.map((action) => (
            <option key={action} value={action}>
              {t(`audit.action.${action}`)}
            </option>
          ))}
        </select>
      </div>
      <LabSelect value={filters.lab ?? ""} onChange={(lab) => onChange("lab", lab)} />
      <FilterTextField
        label={t("audit.filters.session")}
        placeholder={t("audit.filters.sessionId")}
        value={filters.session ?? ""}
        onApply={(value) => onChange("session", value)}
      />
    </form>
  );
}

function AuditTable({
  entries,
  labTitle,
}: {
  entries: AuditEntry[];
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();
  const format = useFormat();
  return (
    <div className="table-scroll">
      <table className="table" aria-label={t("audit.table.label")}>
        <thead>
          <tr>
            <th scope="col">{t("audit.table.when")}</th>
            <th scope="col">{t("audit.table.who")}</th>
            <th scope="col">{t("audit.table.what")}</th>
            <th scope="col">{t("audit.table.session")}</th>
            <th scope="col">{t("audit.table.details")}</th>
            <th scope="col">{t("audit.table.from")}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td>
                <time dateTime={entry.at}>{format.dateTime(entry.at)}</time>
              </td>
              <th scope="row">
                <span translate="no">{entry.actor}</span>
                {entry.actorRole && <span className="muted small"> ({t(`roles.${entry.actorRole}`)})</span>}
              </th>
              <td>{t(`audit.action.${entry.action}`)}</td>
              <td>
                {entry.sessionId ? (
                  <>
                    <Link to={paths.session.to(entry.sessionId)} translate="no">
                      {entry.owner ?? entry.sessionId}
                    </Link>{" "}
                    {entry.labId && (
                      <span className="muted small">
                        <LangText text={labTitle(entry.labId)} />
                      </span>
                    )}
                  </>
                ) : entry.labId ? (
                  <LangText text={labTitle(entry.labId)} />
                ) : (
                  "—"
                )}
              </td>
              <td className="audit-details" translate="no">
                {Object.entries(entry.details)
                  .map(([key, value]) => `${key}: ${String(value)}`)
                  .join(", ") || "—"}
              </td>
              <td className="audit-details" title={entry.userAgent ?? undefined} translate="no">
                {entry.ip ?? "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
