// An LMS's section or group name as a Lab Console section name (sectionPattern in common/api.ts):
// lower case, runs of anything else as one dash, at most 63 characters. Undefined when nothing is left.
import { sectionPattern } from "../../common/api.ts";

export function sectionNameOf(lmsName: string): string | undefined {
  const name = lmsName
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "")
    .slice(0, 63)
    .replace(/[^a-z0-9]+$/, "");
  return sectionPattern.test(name) ? name : undefined;
}
