// EndedSignInRepository on PostgreSQL (pg), chosen by DATABASE_URL: the store every replica shares.
import { PostgresDatabase, type PostgresOptions } from "../../db/postgres/database.ts";
import { postgresEndedSignInsSchema } from "../../db/postgres/ended-sign-ins-schema.ts";
import type { EndedSignIn, EndedSignInRepository, EndedSignInsPage } from "./repository.ts";

interface Row {
  seq: string;
  id: string;
  expires_at: Date;
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

  /** Connects, and creates or upgrades the table. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresEndedSignInRepository> {
    return new PostgresEndedSignInRepository(
      await PostgresDatabase.open(url, postgresEndedSignInsSchema, options),
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
      endedSignIns: rows.map((row) => ({ id: row.id, expiresAt: row.expires_at.getTime() })),
      position: rows.reduce((highest, row) => Math.max(highest, Number(row.seq)), position),
    };
  }

  async purgeExpired(now: number): Promise<number> {
    const deleted = await this.db.query<{ id: string }>(
      "DELETE FROM ended_sign_ins WHERE expires_at <= $1 RETURNING id",
      [new Date(now)],
    );
    return deleted.length;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
