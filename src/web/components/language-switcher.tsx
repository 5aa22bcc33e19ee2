import { useId } from "react";
import { useTranslation } from "react-i18next";
import { isLanguage, languageInfo, languages } from "../lib/i18n/languages.ts";
import { useLanguage } from "../lib/i18n/use-language.ts";

/** The page's language. Each option is in its own language, so anyone can find theirs. */
export function LanguageSwitcher() {
  const { t } = useTranslation();
  const { language, changeLanguage } = useLanguage();
  const id = useId();
  return (
    <div className="language-switcher">
      {/* The languages are named in their own words, which say what the list is: the label is for
          screen readers, and its room in the header for the pages. */}
      <label htmlFor={id} className="visually-hidden">
        {t("app.language")}
      </label>
      <select
        id={id}
        value={language}
        onChange={(event) => {
          if (isLanguage(event.target.value)) changeLanguage(event.target.value);
        }}
      >
        {languages.map((each) => (
          <option key={each} value={each} lang={languageInfo[each].tag}>
            {languageInfo[each].ownName}
          </option>
        ))}
      </select>
    </div>
  );
}
