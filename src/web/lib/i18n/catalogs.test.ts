import { describe, expect, it } from "vitest";
import { sessionNoticeReasons } from "../../../common/api.ts";
import { consoleNoticeReasons, ScreenBlankReason } from "../../../common/console-protocol.ts";
import { doctorTexts } from "../../../common/doctor-texts.ts";
import { errorReasons } from "../../../common/error-reasons.ts";
import en from "../../locales/en.json";
import ja from "../../locales/ja.json";
import zh from "../../locales/zh.json";
import { languageInfo, languages, type Language } from "./languages.ts";

const catalogs = { en, ja, zh };

type Catalog = { [key: string]: string | Catalog };

function flatten(catalog: Catalog, prefix = ""): Map<string, string> {
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(catalog)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === "string") entries.set(path, value);
    else for (const [child, text] of flatten(value, path)) entries.set(child, text);
  }
  return entries;
}

const pluralSuffix = /_(zero|one|two|few|many|other)$/;

/** Keys as the code uses them: `x_one` and `x_other` are one key `x` with its plural forms. */
function byBaseKey(entries: Map<string, string>): Map<string, Map<string, string>> {
  const keys = new Map<string, Map<string, string>>();
  for (const [key, text] of entries) {
    const category = pluralSuffix.exec(key)?.[1] ?? "";
    const base = key.replace(pluralSuffix, "");
    keys.set(base, (keys.get(base) ?? new Map()).set(category, text));
  }
  return keys;
}

/** {{name}} interpolations and <name/> components: a translation must keep every one. */
function placeholders(text: string): string[] {
  return [...text.matchAll(/\{\{\s*(\w+)[^}]*\}\}|<\/?(\w+)\s*\/?>/g)].map(
    (match) => match[1] ?? `<${match[2]}>`,
  );
}

const keysByLanguage = Object.fromEntries(
  languages.map((language) => [language, byBaseKey(flatten(catalogs[language]))]),
) as Record<Language, Map<string, Map<string, string>>>;
const allKeys = new Set(languages.flatMap((language) => [...keysByLanguage[language].keys()]));

describe("message catalogs", () => {
  it.each(languages)("%s has every key that another catalog has, and no other", (language) => {
    const keys = keysByLanguage[language];
    expect([...allKeys].filter((key) => !keys.has(key))).toEqual([]);
  });

  it.each(languages)("%s has exactly the plural forms its language uses", (language) => {
    const categories = new Intl.PluralRules(languageInfo[language].tag).resolvedOptions().pluralCategories;
    const pluralKeys = [...allKeys].filter((key) =>
      languages.some((each) =>
        [...(keysByLanguage[each].get(key)?.keys() ?? [])].some((form) => form !== ""),
      ),
    );
    const wrong = pluralKeys.flatMap((key) => {
      const forms = [...(keysByLanguage[language].get(key)?.keys() ?? [])].sort();
      return forms.join() === [...categories].sort().join() ? [] : [`${key}: ${forms.join() || "none"}`];
    });
    expect(wrong).toEqual([]);
  });

  it.each(languages.filter((language) => language !== "en"))(
    "%s keeps every placeholder of the English text and leaves no text empty",
    (language) => {
      const problems = [...keysByLanguage.en].flatMap(([key, forms]) => {
        const expected = new Set([...forms.values()].flatMap(placeholders));
        const translated = [...(keysByLanguage[language].get(key)?.values() ?? [])];
        const found = new Set(translated.flatMap(placeholders));
        const missing = [...expected].filter((name) => !found.has(name));
        const extra = [...found].filter((name) => !expected.has(name));
        const empty = translated.some((text) => text.trim() === "");
        return missing.length + extra.length > 0 || empty
          ? [
              `${key}: missing ${missing.join() || "-"}, extra ${extra.join() || "-"}${empty ? ", empty" : ""}`,
            ]
          : [];
      });
      expect(problems).toEqual([]);
    },
  );

  it.each(languages)("%s says every reason the BFF gives, for errors, sessions and consoles", (language) => {
    const keys = keysByLanguage[language];
    const wanted = [
      ...errorReasons.map((reason) => `errors.reasons.${reason}`),
      ...sessionNoticeReasons.map((reason) => `sessions.notices.${reason}`),
      ...consoleNoticeReasons.map((reason) => `console.notices.${reason}`),
      ...ScreenBlankReason.options.map((reason) => `console.blankScreen.${reason}`),
      ...Object.keys(doctorTexts).map((key) => `doctor.texts.${key}`),
    ];
    expect(wanted.filter((key) => !keys.has(key))).toEqual([]);
  });

  it("says the doctor's sentences in English exactly as the BFF and `npm run doctor` do", () => {
    expect(en.doctor.texts).toEqual(doctorTexts);
  });

  it("notices a missing key, so the checks above can fail", () => {
    const partial = byBaseKey(flatten({ a: "A", b: { c_one: "C", c_other: "Cs" } }));
    expect([...partial.keys()]).toEqual(["a", "b.c"]);
    expect(placeholders("Run <b>{{count}}</b> of {{ total }}")).toEqual(["<b>", "count", "<b>", "total"]);
  });
});
