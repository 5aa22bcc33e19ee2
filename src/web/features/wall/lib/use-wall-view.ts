import { startTransition, useCallback, useMemo, useOptimistic } from "react";
import { useSearchParams } from "react-router";
import { readWallView, wallViewParams, type WallView } from "./wall-view.ts";

/**
 * The wall's view as the page's URL holds it. A change replaces the history entry (Back leaves the
 * wall rather than undoing each filter), like the other pages' filters (lib/url-filters.ts), but keeps
 * the search as typed: a regular expression's spaces are part of it.
 */
export function useWallView(): [WallView, (changes: Partial<WallView>) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const view = useMemo(() => readWallView(searchParams), [searchParams]);
  // The router applies a new URL in a transition: until it has, the controls show the change already,
  // instead of springing back for a moment (a checkbox unticking itself under the click).
  const [shown, showChange] = useOptimistic(view, (current, changes: Partial<WallView>) => ({
    ...current,
    ...changes,
  }));
  const setView = useCallback(
    (changes: Partial<WallView>) =>
      startTransition(() => {
        showChange(changes);
        setSearchParams(
          (current) => new URLSearchParams(wallViewParams({ ...readWallView(current), ...changes })),
          { replace: true },
        );
      }),
    [setSearchParams, showChange],
  );
  return [shown, setView];
}
