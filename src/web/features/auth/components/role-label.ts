import type { Role } from "../../../../common/api.ts";

export const roleLabels: Record<Role, string> = { student: "Student", ta: "TA", instructor: "Instructor" };

export function isStaff(role: Role): boolean {
  return role === "ta" || role === "instructor";
}
