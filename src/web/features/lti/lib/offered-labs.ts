import type { LtiDeepLinkRequest } from "../../../../common/lti-api.ts";
import type { Language } from "../../../lib/i18n/languages.ts";
import { pickTranslation, type LocalText } from "../../../lib/i18n/pick-translation.ts";

export interface OfferedLab {
  id: string;
  title: LocalText;
  description: LocalText | null;
}

/** The labs a deep-linking request offers, in the reader's language where the lab file has it, else in English. */
export function localizeOffer(offered: LtiDeepLinkRequest["labs"], language: Language): OfferedLab[] {
  return offered.map((lab) => ({
    id: lab.id,
    title: pickTranslation(lab.title, lab.translations?.title, language),
    description: lab.description
      ? pickTranslation(lab.description, lab.translations?.description, language)
      : null,
  }));
}
