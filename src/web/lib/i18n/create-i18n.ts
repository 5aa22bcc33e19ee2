import { createInstance, type i18n as I18n } from "i18next";
import { initReactI18next } from "react-i18next";
import en from "../../locales/en.json";
import ja from "../../locales/ja.json";
import zh from "../../locales/zh.json";
import { languages, type Language } from "./languages.ts";

/** Every catalog, by language. All three ship in the bundle: together they are smaller than a font. */
export const catalogs = { en, ja, zh } as const;

/** An i18next instance for the pages, ready at once (the catalogs are bundled, nothing loads). */
export function createI18n(language: Language): I18n {
  const i18n = createInstance();
  void i18n.use(initReactI18next).init({
    lng: language,
    fallbackLng: "en",
    supportedLngs: languages,
    resources: {
      en: { translation: catalogs.en },
      ja: { translation: catalogs.ja },
      zh: { translation: catalogs.zh },
    },
    initAsync: false,
    // React escapes what it renders; escaping here too would show &amp; in the page.
    interpolation: { escapeValue: false },
  });
  return i18n;
}
