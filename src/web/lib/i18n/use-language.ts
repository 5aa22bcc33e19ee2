import { useTranslation } from "react-i18next";
import { storeLanguage } from "./language-preference.ts";
import { isLanguage, languageInfo, type Language } from "./languages.ts";

/** The page's language, and a way to change it that is remembered for the next visit. */
export function useLanguage(): {
  language: Language;
  tag: string;
  changeLanguage: (language: Language) => void;
} {
  const { i18n } = useTranslation();
  const language = isLanguage(i18n.language) ? i18n.language : "en";
  return {
    language,
    tag: languageInfo[language].tag,
    changeLanguage: (next) => {
      storeLanguage(next);
      void i18n.changeLanguage(next);
    },
  };
}
