import type { TFunction } from "i18next";
import { sessionNoticeReasons, type Session } from "../../../../common/api.ts";
import { isOneOf } from "../../../../common/error-reasons.ts";
import type { Language } from "../../../lib/i18n/languages.ts";
import { english, type LocalText } from "../../../lib/i18n/pick-translation.ts";

/**
 * Why the session needs attention, in the reader's language; null when nothing is wrong. A reason
 * this page does not know (a newer BFF) shows the BFF's English words.
 */
export function sessionNoticeText(session: Session, t: TFunction, language: Language): LocalText | null {
  const { notice, message } = session;
  if (notice && isOneOf(sessionNoticeReasons, notice.reason)) {
    return { text: t(`sessions.notices.${notice.reason}`, notice.params), lang: language };
  }
  return message ? english(message) : null;
}
