import type { LtiDeepLinkRequest } from "../../../../common/lti-api.ts";
import { english, type LocalText } from "../../../lib/i18n/pick-translation.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";

export interface OfferedLab {
  id: string;
  title: LocalText;
  description: LocalText | null;
}

/**
 * The labs a deep-linking request offers, in the reader's language where the catalog has them; the
 * request's own (English) texts otherwise, as for a lab the catalog has not loaded yet.
 */
export function localizeOffer(
  offered: LtiDeepLinkRequest["labs"],
  catalog: readonly LocalizedLab[] | undefined,
): OfferedLab[] {
  const byId = new Map(catalog?.map((lab) => [lab.id, lab]));
  return offered.map((lab) => {
    const local = byId.get(lab.id);
    return {
      id: lab.id,
      title: local?.title ?? english(lab.title),
      description: local?.description ?? (lab.description ? english(lab.description) : null),
    };
  });
}
