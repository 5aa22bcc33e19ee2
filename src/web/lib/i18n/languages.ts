import { textLanguages, type TextLanguage } from "../../../common/translations.ts";

/** The languages the pages come in: the same as a lab file's. */
export const languages = textLanguages;
export type Language = TextLanguage;

interface LanguageInfo {
  /** The BCP 47 tag for `lang` attributes and Intl. */
  tag: string;
  /** The language's name in itself: the switcher shows it whatever the page's language. */
  ownName: string;
}

export const languageInfo: Record<Language, LanguageInfo> = {
  en: { tag: "en", ownName: "English" },
  ja: { tag: "ja", ownName: "日本語" },
  zh: { tag: "zh-CN", ownName: "简体中文" },
};

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (languages as readonly string[]).includes(value);
}

/**
 * The first of the browser's languages that the pages come in, by its primary subtag. Traditional
 * Chinese (zh-TW) gets the Simplified pages: closer to the reader than English.
 */
export function matchLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const primary = tag.toLowerCase().split("-")[0];
    if (isLanguage(primary)) return primary;
  }
  return "en";
}
