// Which role a person gets from the groups their provider puts in the groups claim. Staff roles are
// only ever given by an explicit group. Students: when the mapping names student groups, only their
// members (and staff) may sign in at all; without a student entry, everyone the provider lets through
// is a student. So a provider shared with the rest of a university can be narrowed to one course.
import { z } from "zod";
import type { Role } from "../../../common/api.ts";

const groupList = z.array(z.string().min(1)).min(1, "must list at least one group");

export const RoleGroups = z
  .object({ instructor: groupList.optional(), ta: groupList.optional(), student: groupList.optional() })
  .strict()
  .refine(
    (groups) => groups.instructor !== undefined || groups.ta !== undefined,
    "must name the instructor or TA groups (a console nobody can grade in is a mistake)",
  );
export type RoleGroups = z.infer<typeof RoleGroups>;

// Most powerful first: someone in both a TA and an instructor group is an instructor.
const precedence = ["instructor", "ta", "student"] as const satisfies readonly Role[];

/** The role for these groups, or null when the mapping lets this person in with no role at all. */
export function roleForGroups(groups: readonly string[], mapping: RoleGroups): Role | null {
  const member = new Set(groups);
  for (const role of precedence) {
    if (mapping[role]?.some((group) => member.has(group))) return role;
  }
  return mapping.student === undefined ? "student" : null;
}

/** The groups claim as a list: providers send an array, a few a single string. */
export function groupsFromClaim(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((group): group is string => typeof group === "string");
  return [];
}
