import type { TFunction } from "i18next";
import { sessionNoticeReasons } from "../../common/api.ts";
import { consoleNoticeReasons, type ConsoleNotice } from "../../common/console-protocol.ts";
import { isOneOf } from "../../common/error-reasons.ts";
import type { Language } from "./i18n/languages.ts";
import { english, type LocalText } from "./i18n/pick-translation.ts";

/**
 * What the BFF says about the console (waiting, ended), in the reader's language. A reason this page
 * does not know (a newer BFF), or no reason at all, shows the BFF's English words.
 */
export function consoleNoticeText(
  notice: ConsoleNotice | undefined,
  englishText: string,
  t: TFunction,
  language: Language,
): LocalText {
  if (!notice || !isOneOf(consoleNoticeReasons, notice.reason)) return english(englishText);
  const local = (text: string): LocalText => ({ text, lang: language });
  if (notice.reason !== "session_failed") return local(t(`console.notices.${notice.reason}`, notice.params));
  // A failed session ends its console with the session's own notice.
  const { sessionNotice, ...params } = notice.params;
  if (typeof sessionNotice !== "string" || !isOneOf(sessionNoticeReasons, sessionNotice)) {
    return local(t("console.notices.vm_failed"));
  }
  return local(
    t("console.notices.session_failed", { cause: t(`sessions.notices.${sessionNotice}`, params) }),
  );
}
