// The audit feature's query keys, general to specific: invalidating ["audit"] refreshes every filtered
// view of the log, as a new entry may belong to any of them.
import type { AuditFilters } from "./get-audit.ts";

export const auditKeys = {
  all: ["audit"] as const,
  list: (filters: AuditFilters) => [...auditKeys.all, "list", filters] as const,
};
