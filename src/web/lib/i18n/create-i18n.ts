import { createInstance, type BackendModule, type i18n as I18n, type ResourceKey } from "i18next";
import { initReactI18next } from "react-i18next";
import en from "../../locales/en.json";
import { isLanguage, languages, type Language } from "./languages.ts";

// English is in the first download: it is every page's fallback, and most people read it. The other
// catalogs load when someone's language is one of them, each in a chunk of its own.
const loadCatalog: Record<Exclude<Language, "en">, () => Promise<{ default: ResourceKey }>> = {
  ja: () => import("../../locales/ja.json"),
  zh: () => import("../../locales/zh.json"),
};

const catalogChunks: BackendModule = {
  type: "backend",
  callbackApi: false,
  init: () => {},
  read: async (language: string) => {
    if (!isLanguage(language) || language === "en") return {};
    return (await loadCatalog[language]()).default;
  },
};

/**
 * An i18next instance for the pages, ready once `language`'s catalog is in. Changing the language
 * later keeps the page in the old one until the new catalog has loaded.
 */
export async function createI18n(language: Language): Promise<I18n> {
  const i18n = createInstance();
  await i18n
    .use(catalogChunks)
    .use(initReactI18next)
    .init({
      lng: language,
      fallbackLng: "en",
      supportedLngs: languages,
      resources: { en: { translation: en } },
      // Only English is bundled above: the backend loads the other languages.
      partialBundledLanguages: true,
      // React escapes what it renders; escaping here too would show &amp; in the page.
      interpolation: { escapeValue: false },
    });
  return i18n;
}
