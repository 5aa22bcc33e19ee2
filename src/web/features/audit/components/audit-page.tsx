import { useId, useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { AuditAction, auditActions, type AuditEntry } from "../../../../common/operations-api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { paths } from "../../../lib/paths.ts";
import { useLabs, useLabTitles } from "../../labs/api/get-labs.ts";
import { auditSearch, useAuditLog, type AuditFilters } from "../api/get-audit.ts";
import { auditActionLabels } from "./audit-labels.ts";
import "../audit.css";

/** Who did what, when and from where: filtered by the URL, newest first, exportable as JSON lines. */
export function AuditPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const filters = useMemo(() => readFilters(searchParams), [searchParams]);
  const query = useAuditLog(filters);
  const labTitles = useLabTitles();
  const entries = query.data?.pages.flatMap((page) => page.items) ?? [];

  const change = (name: keyof AuditFilters, value: string) =>
    setSearchParams(
      (current) => {
        const next = new URLSearchParams(current);
        if (value.trim()) next.set(name, value.trim());
        else next.delete(name);
        return next;
      },
      { replace: true },
    );

  return (
    <main className="page page-wide">
      <title>Audit log · Lab Console</title>
      <h1 className="page-title">Audit log</h1>
      <p className="lead">Sign-ins, sessions, consoles and grading: who did what, when and from where.</p>
      <AuditFilterBar filters={filters} onChange={change} />
      <div className="audit-actions">
        <a className="button" href={`/api/audit/export?${auditSearch(filters)}`} download>
          Export as JSON lines
        </a>
      </div>
      {query.isPending ? (
        <Loading label="Loading the audit log…" />
      ) : query.isError && !query.data ? (
        <ErrorPanel
          title="Could not load the audit log"
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {entries.length === 0 ? (
            <p className="empty">No entries match these filters.</p>
          ) : (
            <AuditTable entries={entries} labTitles={labTitles} />
          )}
          {query.hasNextPage && (
            <button
              type="button"
              className="button"
              disabled={query.isFetchingNextPage}
              onClick={() => void query.fetchNextPage()}
            >
              {query.isFetchingNextPage ? "Loading…" : "Load older entries"}
            </button>
          )}
        </>
      )}
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
  const labs = useLabs();
  const ids = { user: useId(), action: useId(), lab: useId(), session: useId() };
  return (
    <form
      className="filters"
      role="search"
      aria-label="Filter the audit log"
      onSubmit={(event) => event.preventDefault()}
    >
      <div className="field">
        <label className="field-label" htmlFor={ids.user}>
          Person
        </label>
        <input
          id={ids.user}
          type="search"
          placeholder="Exact username"
          autoComplete="off"
          key={filters.user ?? ""}
          defaultValue={filters.user ?? ""}
          onBlur={(event) => onChange("user", event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter") onChange("user", event.currentTarget.value);
          }}
        />
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.action}>
          Action
        </label>
        <select
          id={ids.action}
          value={filters.action ?? ""}
          onChange={(event) => onChange("action", event.target.value)}
        >
          <option value="">Any action</option>
          {auditActions.map((action) => (
            <option key={action} value={action}>
              {auditActionLabels[action]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.lab}>
          Lab
        </label>
        <select
          id={ids.lab}
          value={filters.lab ?? ""}
          onChange={(event) => onChange("lab", event.target.value)}
        >
          <option value="">All labs</option>
          {labs.data?.map((lab) => (
            <option key={lab.id} value={lab.id}>
              {lab.title}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.session}>
          Session
        </label>
        <input
          id={ids.session}
          type="search"
          placeholder="Session id"
          autoComplete="off"
          key={filters.session ?? ""}
          defaultValue={filters.session ?? ""}
          onBlur={(event) => onChange("session", event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter") onChange("session", event.currentTarget.value);
          }}
        />
      </div>
    </form>
  );
}

function AuditTable({
  entries,
  labTitles,
}: {
  entries: AuditEntry[];
  labTitles: ReadonlyMap<string, string>;
}) {
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Audit log">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">What</th>
            <th scope="col">Session</th>
            <th scope="col">Details</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td>
                <time dateTime={entry.at}>{new Date(entry.at).toLocaleString()}</time>
              </td>
              <th scope="row">
                {entry.actor}
                {entry.actorRole && <span className="muted small"> ({entry.actorRole})</span>}
              </th>
              <td>{auditActionLabels[entry.action]}</td>
              <td>
                {entry.sessionId ? (
                  <>
                    <Link to={paths.session.to(entry.sessionId)}>{entry.owner ?? entry.sessionId}</Link>
                    <span className="muted small"> {labTitles.get(entry.labId ?? "") ?? entry.labId}</span>
                  </>
                ) : (
                  (labTitles.get(entry.labId ?? "") ?? entry.labId ?? "—")
                )}
              </td>
              <td className="audit-details">
                {Object.entries(entry.details)
                  .map(([key, value]) => `${key}: ${String(value)}`)
                  .join(", ") || "—"}
              </td>
              <td className="audit-details" title={entry.userAgent ?? undefined}>
                {entry.ip ?? "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
