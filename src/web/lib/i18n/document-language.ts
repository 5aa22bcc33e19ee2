import type { i18n as I18n } from "i18next";
import { useEffect } from "react";
import { isLanguage, languageInfo } from "./languages.ts";

/**
 * Keeps <html lang> on the page's language: screen readers pick their voice by it, and browsers
 * their fonts (the same Han character is drawn differently for Japanese and Chinese).
 */
export function useDocumentLanguage(i18n: I18n): void {
  useEffect(() => {
    const apply = (language: string) => {
      if (isLanguage(language)) document.documentElement.lang = languageInfo[language].tag;
    };
    apply(i18n.language);
    i18n.on("languageChanged", apply);
    return () => i18n.off("languageChanged", apply);
  }, [i18n]);
}
