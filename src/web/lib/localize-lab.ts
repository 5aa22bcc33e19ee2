// A lab in the reader's language: the catalog, the sessions and the grading pages all show labs, so
// the type they share lives here rather than in one of those features.
import type { LabSummary } from "../../common/api.ts";
import type { Language } from "./i18n/languages.ts";
import { pickTranslation, type LocalText } from "./i18n/pick-translation.ts";

/** A lab with its texts in the reader's language where the lab file has them, English otherwise. */
export interface LocalizedLab extends Omit<LabSummary, "title" | "description" | "checks" | "translations"> {
  title: LocalText;
  description: LocalText;
  checks: (Omit<LabSummary["checks"][number], "title" | "translations"> & { title: LocalText })[];
}

export function localizeLab(lab: LabSummary, language: Language): LocalizedLab {
  const { translations, checks, ...rest } = lab;
  return {
    ...rest,
    title: pickTranslation(lab.title, translations?.title, language),
    description: pickTranslation(lab.description, translations?.description, language),
    checks: checks.map(({ translations: checkTranslations, ...check }) => ({
      ...check,
      title: pickTranslation(check.title, checkTranslations?.title, language),
    })),
  };
}
