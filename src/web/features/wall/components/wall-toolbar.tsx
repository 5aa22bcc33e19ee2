import { useId } from "react";
import { useTranslation } from "react-i18next";
import { sessionStatuses } from "../../../../common/api.ts";
import { wallSearchMaxLength, type WallSearch } from "../../../../common/wall-protocol.ts";
import { SelectField } from "../../../components/select-field.tsx";
import { useTypedValue } from "../../../lib/typed-value.ts";
import type { SearchResult } from "../lib/wall-connection.ts";
import { defaultWallView, idleAfterMs, scoreFilters, wallSorts, type WallView } from "../lib/wall-view.ts";

/** Typing waits this long for a pause before the BFF is asked: each search is work on every screen. */
const typingDelayMs = 200;

export interface WallCounts {
  /** Sessions on the wall, and how many of them the filters keep. */
  total: number;
  shown: number;
  /** Of those kept, how many match the search. */
  matching: number;
}

/**
 * The wall's search (plain text or a regular expression, with or without case), its filters and its
 * sort, and one status line that says how many screens match or why the BFF refused the pattern. The
 * status line keeps its height whatever it says, so the grid under it never moves.
 */
export function WallToolbar({
  view,
  onChange,
  sections,
  showScore,
  search,
  counts,
}: {
  view: WallView;
  onChange: (changes: Partial<WallView>) => void;
  /** The sections present on the wall; the section filter shows only when there are any. */
  sections: readonly string[];
  /** Whether the lab has self-checks to filter by. */
  showScore: boolean;
  search: SearchResult;
  counts: WallCounts;
}) {
  const { t } = useTranslation();
  const queryId = useId();
  const [query, setQuery] = useTypedValue(
    view.search.query,
    (typed) => onChange({ search: { ...view.search, query: typed } }),
    { delayMs: typingDelayMs },
  );

  const applySearch = (change: Partial<WallSearch>) =>
    onChange({ search: { ...view.search, query, ...change } });

  const filtered = view.hand || view.idle || view.score !== "" || view.status !== "" || view.section !== "";
  // A section someone's link asks for stays choosable (and clearable) while nobody on the wall is in it.
  const sectionOptions =
    view.section && !sections.includes(view.section) ? [...sections, view.section] : sections;

  return (
    <form
      className="wall-toolbar"
      role="search"
      aria-label={t("wall.toolbar.label")}
      onSubmit={(event) => {
        event.preventDefault();
        applySearch({});
      }}
    >
      <div className="wall-search">
        <div className="field wall-search-field">
          <label className="field-label" htmlFor={queryId}>
            {t("wall.search.label")}
          </label>
          <input
            id={queryId}
            type="search"
            placeholder={t("wall.search.placeholder")}
            autoComplete="off"
            spellCheck={false}
            maxLength={wallSearchMaxLength}
            value={query}
            onChange={(event) => setQuery(event.target.value)}
          />
        </div>
        <label className="wall-check">
          <input
            type="checkbox"
            checked={view.search.regex}
            onChange={(event) => applySearch({ regex: event.target.checked })}
          />
          {t("wall.search.regex")}
        </label>
        <label className="wall-check">
          <input
            type="checkbox"
            checked={view.search.matchCase}
            onChange={(event) => applySearch({ matchCase: event.target.checked })}
          />
          {t("wall.search.matchCase")}
        </label>
        <SelectField
          className="wall-sort"
          label={t("wall.sort.label")}
          value={view.sort}
          options={wallSorts.map((sort) => ({ value: sort, label: t(`wall.sort.${sort}`) }))}
          onChange={(sort) => onChange({ sort: sort || defaultWallView.sort })}
        />
      </div>
      <div className="wall-filters">
        <label className="wall-check">
          <input
            type="checkbox"
            checked={view.hand}
            onChange={(event) => onChange({ hand: event.target.checked })}
          />
          {t("wall.filters.hand")}
        </label>
        <label className="wall-check">
          <input
            type="checkbox"
            checked={view.idle}
            onChange={(event) => onChange({ idle: event.target.checked })}
          />
          {t("wall.filters.idle", { minutes: idleAfterMs / 60_000 })}
        </label>
        {showScore && (
          <SelectField
            label={t("wall.filters.score")}
            anyLabel={t("wall.filters.anyScore")}
            value={view.score}
            options={scoreFilters.map((bucket) => ({
              value: bucket,
              label: t(`wall.filters.scores.${bucket}`),
            }))}
            onChange={(score) => onChange({ score })}
          />
        )}
        <SelectField
          label={t("wall.filters.status")}
          anyLabel={t("wall.filters.anyStatus")}
          value={view.status}
          options={sessionStatuses.map((status) => ({
            value: status,
            label: t(`sessions.status.${status}`),
          }))}
          onChange={(status) => onChange({ status })}
        />
        {sectionOptions.length > 0 && (
          <SelectField
            label={t("wall.filters.section")}
            anyLabel={t("wall.filters.anySection")}
            value={view.section}
            options={sectionOptions.map((section) => ({
              value: section,
              label: section,
              untranslated: true,
            }))}
            onChange={(section) => onChange({ section })}
          />
        )}
        <button
          type="button"
          className="button button-quiet"
          disabled={!filtered}
          onClick={() =>
            onChange({
              hand: defaultWallView.hand,
              idle: defaultWallView.idle,
              score: defaultWallView.score,
              status: defaultWallView.status,
              section: defaultWallView.section,
            })
          }
        >
          {t("wall.filters.clear")}
        </button>
      </div>
      <div className="wall-status-row">
        <p className="wall-status" role="status" data-testid="wall-search-status" data-search={search.kind}>
          {counts.shown !== counts.total && (
            <span>{t("wall.shown", { shown: counts.shown, count: counts.total })} </span>
          )}
          <SearchStatus search={search} counts={counts} />
        </p>
        <p className="wall-keys muted small">{t("wall.keys")}</p>
      </div>
    </form>
  );
}

function SearchStatus({ search, counts }: { search: SearchResult; counts: WallCounts }) {
  const { t } = useTranslation();
  switch (search.kind) {
    case "none":
      return null;
    case "pending":
      return <span>{t("wall.search.searching")}</span>;
    case "answered":
      return <span>{t("wall.search.count", { matching: counts.matching, count: counts.shown })}</span>;
    case "refused":
      return (
        <span className="wall-refused">
          {t("wall.search.refused")}{" "}
          <span lang="en" translate="no">
            {search.detail}
          </span>
        </span>
      );
  }
}
