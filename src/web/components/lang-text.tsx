import { useLanguage } from "../lib/i18n/use-language.ts";
import { languageInfo } from "../lib/i18n/languages.ts";
import type { LocalText } from "../lib/i18n/pick-translation.ts";

/**
 * A text that may be in another language than the page (a lab without a translation, the server's
 * English words): marked with `lang` so screen readers switch voice, and left alone otherwise.
 */
export function LangText({ text }: { text: LocalText }) {
  const { language } = useLanguage();
  if (text.lang === language) return text.text;
  return <span lang={languageInfo[text.lang].tag}>{text.text}</span>;
}
