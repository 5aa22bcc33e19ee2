// What a role may see in the SPA, for the pages and features that show staff more; the BFF enforces
// the same rules on its side.
import type { Role } from "../../common/api.ts";

export function isStaff(role: Role): boolean {
  return role === "ta" || role === "instructor";
}
