// EndedSignInRepository on PostgreSQL (pg), chosen by DATABASE_URL: the store every replica shares.
import { PostgresDatabase, type PostgresOptions } from "../../db/postgres/database.ts";
import { postgresEndedSignInsSchema } from "./postgres-schema.ts";
import type { EndedSignIn, EndedSignInRepository, EndedSignInsPage, SignInCutOff } from "./repository.ts";
import { toCutOff, toEndedSignIn, type CutOffRow, type EndedSignInRow } from "./rows.ts";

interface Row extends EndedSignInRow {
  seq: string;
}

/**
 * How far back every answer re-reads. A row's seq is taken when its INSERT runs but the row shows
 * once it commits, so two replicas recording at once can commit out of seq order, and a poller that
 * already moved past the later seq would never see the earlier row. Re-reading the rows recorded in
 * the last two minutes catches those. WARNING: a write that takes longer than that to commit (the
 * statement timeout is 30 s) could still be missed by a replica that polled in between.
 */
export const lateCommitWindowMs = 2 * 60 * 1000;

export class PostgresEndedSignInRepository implements EndedSignInRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /**
   * Connects, and creates or upgrades the tables. Every statement here is a short insert or a read of
   * a few rows, polled every 2 s: no answer within 10 s means the database is out of reach, and the
   * poll says so and tries again rather than hang (and hold up shutdown).
   */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresEndedSignInRepository> {
    return new PostgresEndedSignInRepository(
      await PostgresDatabase.open(url, postgresEndedSignInsSchema, {
        statementTimeoutMs: 8_000,
        queryTimeoutMs: 10_000,
        ...options,
      }),
    );
  }

  async record(ended: EndedSignIn): Promise<void> {
    await this.db.query(
      "INSERT INTO ended_sign_ins (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
      [ended.id, new Date(ended.expiresAt)],
    );
  }

  async endedSince(position: number): Promise<EndedSignInsPage> {
    const rows = await this.db.query<Row>(
      `SELECT seq, id, expires_at FROM ended_sign_ins
       WHERE seq > $1 OR ended_at > clock_timestamp() - make_interval(secs => $2)
       ORDER BY seq`,
      [position, lateCommitWindowMs / 1000],
    );
    return {
      endedSignIns: rows.map(toEndedSignIn),
      position: rows.reduce((highest, row) => Math.max(highest, Number(row.seq)), position),
    };
  }

  async recordCutOff(cutOff: SignInCutOff): Promise<void> {
    await this.db.query(
      `INSERT INTO sign_in_cut_offs (username, issued_up_to, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (username) DO UPDATE SET
         issued_up_to = GREATEST(sign_in_cut_offs.issued_up_to, excluded.issued_up_to),
         expires_at = GREATEST(sign_in_cut_offs.expires_at, excluded.expires_at)`,
      [cutOff.username, new Date(cutOff.issuedUpTo), new Date(cutOff.expiresAt)],
    );
  }

  async cutOffs(now: number): Promise<SignInCutOff[]> {
    const rows = await this.db.query<CutOffRow>(
      "SELECT username, issued_up_to, expires_at FROM sign_in_cut_offs WHERE expires_at > $1 ORDER BY username",
      [new Date(now)],
    );
    return rows.map(toCutOff);
  }

  async purgeExpired(now: number): Promise<number> {
    const [row] = await this.db.query<{ deleted: string }>(
      `WITH signed_out AS (DELETE FROM ended_sign_ins WHERE expires_at <= $1 RETURNING 1),
            cut_off AS (DELETE FROM sign_in_cut_offs WHERE expires_at <= $1 RETURNING 1)
       SELECT (SELECT count(*) FROM signed_out) + (SELECT count(*) FROM cut_off) AS deleted`,
      [new Date(now)],
    );
    return Number(row?.deleted ?? 0);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
