// Where audit entries are kept. Async throughout so that another database fits the same interface.
import type { AuditEntry, AuditQuery } from "../../common/operations-api.ts";

export type NewAuditEntry = Omit<AuditEntry, "id">;

/** AuditQuery without paging: what to match. */
export type AuditFilter = Omit<AuditQuery, "before" | "limit">;

export interface AuditRepository {
  append(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Newest first: at most `limit` entries matching the filter with ids below `before`. */
  list(filter: AuditFilter, page: { before?: number; limit: number }): Promise<AuditEntry[]>;
  close(): Promise<void>;
}
