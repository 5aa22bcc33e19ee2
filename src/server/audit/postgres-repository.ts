// AuditRepository on PostgreSQL (pg), chosen by DATABASE_URL: one append-only table, read newest
// first by id.
import type { AuditEntry } from "../../common/operations-api.ts";
import { jsonAsReturned } from "../db/column-values.ts";
import { PostgresDatabase, type PostgresOptions } from "../db/postgres/database.ts";
import { postgresAuditSchema } from "./postgres-schema.ts";
import type { AuditFilter, AuditRepository, NewAuditEntry } from "./repository.ts";
import { toEntry, type AuditRow } from "./rows.ts";

export class PostgresAuditRepository implements AuditRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /** Connects, and creates or upgrades the audit table. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresAuditRepository> {
    return new PostgresAuditRepository(await PostgresDatabase.open(url, postgresAuditSchema, options));
  }

  async append(entry: NewAuditEntry): Promise<AuditEntry> {
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO audit_log (at, actor, actor_role, action, session_id, lab_id, owner, section, details, ip, user_agent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
      [
        entry.at,
        entry.actor,
        entry.actorRole,
        entry.action,
        entry.sessionId,
        entry.labId,
        entry.owner,
        entry.section,
        JSON.stringify(entry.details),
        entry.ip,
        entry.userAgent,
      ],
    );
    return { ...entry, id: Number(row?.id) };
  }

  async list(filter: AuditFilter, page: { before?: number; limit: number }): Promise<AuditEntry[]> {
    // Only fixed clauses with bound parameters: nothing from the request becomes SQL text.
    const clauses: string[] = [];
    const params: unknown[] = [];
    const bind = (value: unknown) => `$${params.push(value)}`;
    if (filter.user !== undefined) {
      const user = bind(filter.user);
      clauses.push(`(actor = ${user} OR owner = ${user})`);
    }
    if (filter.action !== undefined) clauses.push(`action = ${bind(filter.action)}`);
    if (filter.session !== undefined) clauses.push(`session_id = ${bind(filter.session)}`);
    if (filter.lab !== undefined) clauses.push(`lab_id = ${bind(filter.lab)}`);
    // timestamptz compares instants, so bounds in any offset work as they are.
    if (filter.since !== undefined) clauses.push(`at >= ${bind(filter.since)}`);
    if (filter.until !== undefined) clauses.push(`at < ${bind(filter.until)}`);
    if (page.before !== undefined) clauses.push(`id < ${bind(page.before)}`);
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    const rows = await this.db.query<AuditRow>(
      `SELECT * FROM audit_log ${where} ORDER BY id DESC LIMIT ${bind(page.limit)}`,
      params,
    );
    return rows.map((row) => toEntry(row, jsonAsReturned));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
