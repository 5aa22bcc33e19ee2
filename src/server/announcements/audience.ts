// Who may announce to whom, and how far back a student's session looks: the rules the service
// applies, apart so that they read (and are tested) on their own.
import type { Me } from "../../common/api.ts";
import { maxClassHours } from "../../common/classes-api.ts";
import { staffActsOn } from "../access/sections.ts";

/** `section` null: the whole lab, which a TA with sections may not address. */
export function mayAnnounceTo(user: Me, section: string | null): boolean {
  return staffActsOn(user, section);
}

/** As long as a class may last: whoever arrives during it still reads what was said at its start. */
export const lookBackMs = maxClassHours * 3_600_000;

/**
 * The oldest announcement a session is shown: those sent since it started stay until dismissed,
 * however long it runs; a session started later also gets those of the last 12 hours (a latecomer
 * still reads "the proxy is down"), not last week's.
 */
export function shownSince(sessionCreatedAt: number, now: number): number {
  return Math.min(sessionCreatedAt, now - lookBackMs);
}
