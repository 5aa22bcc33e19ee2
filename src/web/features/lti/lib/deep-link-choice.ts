// An instructor's choice of labs for a deep-linking request: several, or exactly one when the LMS
// accepts only one item (then the page shows radio buttons).
import type { LtiDeepLinkRequest } from "../../../../common/lti-api.ts";

/** The most labs one answer may carry (LtiDeepLinkChoice's own limit). */
export const maxLabsPerAnswer = 50;

export function toggleLab(
  chosen: readonly string[],
  labId: string,
  on: boolean,
  acceptMultiple: boolean,
): string[] {
  if (!acceptMultiple) return on ? [labId] : chosen.filter((id) => id !== labId);
  if (!on) return chosen.filter((id) => id !== labId);
  return chosen.includes(labId) ? [...chosen] : [...chosen, labId];
}

/** Why the choice cannot be sent yet, or null when it can. */
export function choiceProblem(chosen: readonly string[]): "none-chosen" | "too-many" | null {
  if (chosen.length === 0) return "none-chosen";
  if (chosen.length > maxLabsPerAnswer) return "too-many";
  return null;
}

/** The chosen labs in the catalog's order, which is the order the LMS adds them to the course; ids no longer offered are dropped. */
export function chosenInCatalogOrder(labs: LtiDeepLinkRequest["labs"], chosen: readonly string[]): string[] {
  return labs.filter((lab) => chosen.includes(lab.id)).map((lab) => lab.id);
}
