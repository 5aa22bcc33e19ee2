import type { Translations } from "../../../common/translations.ts";
import type { Language } from "./languages.ts";

/** A text with the language it is written in, so the page can mark text in another language. */
export interface LocalText {
  text: string;
  lang: Language;
}

/** The text in `language` when there is a translation, else the plain text, which is English. */
export function pickTranslation(
  plain: string,
  translations: Translations | undefined,
  language: Language,
): LocalText {
  const translated = language === "en" ? undefined : translations?.[language];
  return translated === undefined ? { text: plain, lang: "en" } : { text: translated, lang: language };
}

/** Text that only exists in English (the server's own words), in the same shape. */
export function english(text: string): LocalText {
  return { text, lang: "en" };
}
