import type { Announcement } from "../../../../common/announcements-api.ts";

/**
 * The newest announcement not in `known` (the lists come newest first): what a screen reader is told
 * of when a poll brings something new. The first list a page gets brings nothing new: it is simply
 * on the page.
 */
export function newestArrival(
  known: ReadonlySet<string> | null,
  items: readonly Announcement[],
): Announcement | undefined {
  if (known === null) return undefined;
  return items.find((item) => !known.has(item.id));
}
