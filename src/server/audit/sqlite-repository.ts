// AuditRepository on SQLite (better-sqlite3): one append-only table, read newest first by id.
//
// WARNING: the insert commits on its own, and that commit can fail (a full disk, a disk error).
// .run() throws then; .get() reads one row and resets the statement without looking at how it
// ended, so INSERT … RETURNING through .get() hands back the id of an entry never stored.
import type { Database, Statement } from "better-sqlite3";
import type { AuditEntry } from "../../common/operations-api.ts";
import { jsonFromText } from "../db/column-values.ts";
import { withDatabaseErrors } from "../db/errors.ts";
import { openAuditDatabase } from "./audit-database.ts";
import type { AuditFilter, AuditRepository, NewAuditEntry } from "./repository.ts";
import { toEntry, type AuditRow } from "./rows.ts";

export class SqliteAuditRepository implements AuditRepository {
  private readonly file: string;
  private readonly insert: Statement;

  constructor(private readonly db: Database) {
    this.file = db.name;
    this.insert = withDatabaseErrors(this.file, () =>
      db.prepare(`
        INSERT INTO audit_log (at, actor, actor_role, action, session_id, lab_id, owner, section, details, ip, user_agent)
        VALUES (@at, @actor, @actor_role, @action, @session_id, @lab_id, @owner, @section, @details, @ip, @user_agent)`),
    );
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteAuditRepository {
    return new SqliteAuditRepository(openAuditDatabase(dataDir, options));
  }

  async append(entry: NewAuditEntry): Promise<AuditEntry> {
    return withDatabaseErrors(this.file, () => {
      const inserted = this.insert.run({
        at: entry.at,
        actor: entry.actor,
        actor_role: entry.actorRole,
        action: entry.action,
        session_id: entry.sessionId,
        lab_id: entry.labId,
        owner: entry.owner,
        section: entry.section,
        details: JSON.stringify(entry.details),
        ip: entry.ip,
        user_agent: entry.userAgent,
      });
      return { ...entry, id: Number(inserted.lastInsertRowid) };
    });
  }

  async list(filter: AuditFilter, page: { before?: number; limit: number }): Promise<AuditEntry[]> {
    // Only fixed clauses with bound parameters: nothing from the request becomes SQL text.
    const clauses: string[] = [];
    const params: Record<string, string | number> = { limit: page.limit };
    if (filter.user !== undefined) {
      clauses.push("(actor = @user OR owner = @user)");
      params.user = filter.user;
    }
    if (filter.action !== undefined) {
      clauses.push("action = @action");
      params.action = filter.action;
    }
    if (filter.session !== undefined) {
      clauses.push("session_id = @session");
      params.session = filter.session;
    }
    if (filter.lab !== undefined) {
      clauses.push("lab_id = @lab");
      params.lab = filter.lab;
    }
    // Stored times are UTC toISOString() text, so the bounds are normalized to the same form.
    if (filter.since !== undefined) {
      clauses.push("at >= @since");
      params.since = new Date(filter.since).toISOString();
    }
    if (filter.until !== undefined) {
      clauses.push("at < @until");
      params.until = new Date(filter.until).toISOString();
    }
    if (page.before !== undefined) {
      clauses.push("id < @before");
      params.before = page.before;
    }
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    return withDatabaseErrors(this.file, () => {
      const rows = this.db
        .prepare(`SELECT * FROM audit_log ${where} ORDER BY id DESC LIMIT @limit`)
        .all(params) as AuditRow[];
      return rows.map((row) => toEntry(row, jsonFromText));
    });
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
