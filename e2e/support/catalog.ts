// The SPA's own message catalogs, so tests find buttons and headings by the names each language
// gives them: a journey in Japanese clicks 「起動」, not "Launch".
import en from "../../src/web/locales/en.json" with { type: "json" };
import ja from "../../src/web/locales/ja.json" with { type: "json" };
import zh from "../../src/web/locales/zh.json" with { type: "json" };
import type { LabSummary } from "../../src/common/api.ts";

export const catalogs = { en, ja, zh } as const;
export type Language = keyof typeof catalogs;

/** What the browser's `locale` is set to for each language (and what <html lang> then says). */
export const browserLocales: Record<Language, string> = { en: "en-US", ja: "ja-JP", zh: "zh-CN" };
const pageLangs: Record<Language, string> = { en: "en", ja: "ja", zh: "zh-CN" };

type Catalog = { [key: string]: string | Catalog };
export type Translate = (key: string, values?: Record<string, string | number>) => string;

/** A catalog text with its {{values}} filled in, picking the plural form for `count` as i18next does. */
export function translator(language: Language): Translate {
  const plural = new Intl.PluralRules(pageLangs[language]);
  return (key, values = {}) => {
    const forms = [
      ...(typeof values.count === "number" ? [`${key}_${plural.select(values.count)}`] : []),
      key,
    ];
    const text = forms.map((form) => lookup(catalogs[language], form)).find((found) => found !== undefined);
    if (text === undefined) throw new Error(`no text for ${key} in the ${language} catalog`);
    return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => String(values[name] ?? `{{${name}}}`));
  };
}

function lookup(catalog: Catalog, key: string): string | undefined {
  let node: string | Catalog | undefined = catalog;
  for (const part of key.split(".")) node = typeof node === "object" ? node[part] : undefined;
  return typeof node === "string" ? node : undefined;
}

/** The page's `lang` in a language: what <html lang> must say. */
export function pageLang(language: Language): string {
  return pageLangs[language];
}

/**
 * Words of the English catalog that must not show on a page in `language`: every English word of
 * the UI, minus the ones the other catalog keeps too (Lab Console, VM, CPU, JSON, npm…).
 */
export function englishOnlyWords(language: Exclude<Language, "en">): Set<string> {
  const words = (catalog: Catalog) =>
    new Set(
      texts(catalog)
        .map((text) => text.replace(/\{\{[^}]*\}\}|<[^>]*>/g, " "))
        .flatMap((text) => text.match(/[A-Za-z]{2,}/g) ?? [])
        .map((word) => word.toLowerCase()),
    );
  const kept = words(catalogs[language]);
  return new Set([...words(catalogs.en)].filter((word) => !kept.has(word)));
}

function texts(catalog: Catalog): string[] {
  return Object.values(catalog).flatMap((value) => (typeof value === "string" ? [value] : texts(value)));
}

/** A lab's title as the page shows it in `language`, from the lab file's translations. */
export function labTitleIn(lab: LabSummary, language: Language): string {
  return language === "en" ? lab.title : (lab.translations?.title?.[language] ?? lab.title);
}
