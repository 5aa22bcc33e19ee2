// Which sections a person is in, from the groups their provider puts in the groups claim: with
// OIDC_SECTION_GROUP_PREFIX "cs101-section-", the group "cs101-section-a" puts them in section "a".
// A group whose rest is no section name (upper case, spaces, too long) is not a section and is
// ignored, like any group the console does not map. Without a prefix nobody is in a section.
import { sectionPattern } from "../../../common/api.ts";

/** The sections in the order the claim lists them (a student's first counts), each once. */
export function sectionsForGroups(groups: readonly string[], prefix: string | undefined): string[] {
  if (prefix === undefined) return [];
  const sections = groups
    .filter((group) => group.startsWith(prefix))
    .map((group) => group.slice(prefix.length))
    .filter((section) => sectionPattern.test(section));
  return [...new Set(sections)];
}
