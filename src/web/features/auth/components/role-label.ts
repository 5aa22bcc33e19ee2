import type { Role } from "../../../../common/api.ts";

export function isStaff(role: Role): boolean {
  return role === "ta" || role === "instructor";
}
