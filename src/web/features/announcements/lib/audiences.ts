// Whom the form offers to announce to: the rules the BFF enforces (announcements/audience.ts), so that
// nobody is offered a choice that is then refused.
import type { Me } from "../../../../common/api.ts";

/** null: the whole lab. */
export type Audience = string | null;

/**
 * A TA with sections: their own sections only. Anyone else: the whole lab first, then each section
 * the page knows of (those of the lab's sessions), in order.
 */
export function audienceChoices(me: Me, sections: readonly string[]): Audience[] {
  if (me.role === "ta" && me.sections.length > 0) return [...me.sections];
  return [null, ...[...new Set(sections)].sort()];
}
