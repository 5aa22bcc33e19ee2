// The audit_log row as both stores read it, and the entry it makes. details is JSON: text from
// SQLite, a parsed jsonb from pg, so each store passes its JsonColumnReader.
import { AuditEntry } from "../../common/operations-api.ts";
import { isoOf, type JsonColumnReader, type StoredInteger, type StoredTime } from "../db/column-values.ts";

export interface AuditRow {
  id: StoredInteger;
  at: StoredTime;
  actor: string;
  actor_role: string | null;
  action: string;
  session_id: string | null;
  lab_id: string | null;
  owner: string | null;
  section: string | null;
  details: unknown;
  ip: string | null;
  user_agent: string | null;
}

export function toEntry(row: AuditRow, json: JsonColumnReader): AuditEntry {
  return AuditEntry.parse({
    id: Number(row.id),
    at: isoOf(row.at),
    actor: row.actor,
    actorRole: row.actor_role,
    action: row.action,
    sessionId: row.session_id,
    labId: row.lab_id,
    owner: row.owner,
    section: row.section,
    details: json(row.details),
    ip: row.ip,
    userAgent: row.user_agent,
  });
}
