// What an LMS calls a section or a group ("CS 101 - Tue 2pm", "sec_7/A") made a Lab Console section
// name (sectionPattern in common/api.ts): lower case, accents dropped, every run of other characters (and of '-') one '-', no
// separator at either end, at most 63 characters. Two LMS names that differ only in case or
// punctuation become one section, which is how a person reading them would take them too.
import { sectionPattern } from "../../../common/api.ts";

const maxLength = 63;

/** undefined when nothing usable is left (a name of punctuation only). */
export function ltiSectionName(raw: string): string | undefined {
  const name = raw
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .slice(0, maxLength)
    .replace(/^[._-]+|[._-]+$/g, "");
  return sectionPattern.test(name) ? name : undefined;
}

/** Each name made a section once, in the order first given, dropping what makes none. */
export function ltiSectionNames(raw: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const each of raw) {
    const name = ltiSectionName(each);
    if (name) names.add(name);
  }
  return [...names];
}
