import { useCallback } from "react";
import { useSearchParams } from "react-router";

export type FilterChanges = Readonly<Record<string, string | undefined>>;

/**
 * Filters kept in the page's URL, so a filtered view can be shared and survives a reload. A change
 * replaces the history entry (Back leaves the page rather than undoing each filter), a blank value
 * removes its filter, and the page number goes: a different filter is a different result set.
 */
export function useUrlFilters(): [URLSearchParams, (changes: FilterChanges) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const setFilters = useCallback(
    (changes: FilterChanges) =>
      setSearchParams(
        (current) => {
          const next = new URLSearchParams(current);
          for (const [name, value] of Object.entries(changes)) {
            if (value?.trim()) next.set(name, value.trim());
            else next.delete(name);
          }
          next.delete("page");
          return next;
        },
        { replace: true },
      ),
    [setSearchParams],
  );
  return [searchParams, setFilters];
}
