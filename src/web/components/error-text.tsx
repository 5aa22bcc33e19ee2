import { useTranslation } from "react-i18next";
import { describeError, type ErrorCode } from "../lib/api-error.ts";
import { useLanguage } from "../lib/i18n/use-language.ts";
import { LangText } from "./lang-text.tsx";

/** What went wrong, in the reader's language. */
export function ErrorText({
  error,
  overrides,
}: {
  error: unknown;
  /** Sentences that fit this page better than the code's general one (a sign-in's 401). */
  overrides?: Partial<Record<ErrorCode, string>>;
}) {
  const { t } = useTranslation();
  const { language } = useLanguage();
  return <LangText text={describeError(error, t, language, overrides)} />;
}
