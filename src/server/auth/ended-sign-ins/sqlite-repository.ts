// EndedSignInRepository on SQLite (ended-sign-ins.db). Writers take the database's one write lock
// and get their seq under it, so rows become visible in seq order: "after position" is exact.
import type { Database, Statement } from "better-sqlite3";
import { openEndedSignInsDatabase } from "../../db/ended-sign-ins-database.ts";
import { withDatabaseErrors } from "../../db/errors.ts";
import type { EndedSignIn, EndedSignInRepository, EndedSignInsPage } from "./repository.ts";

interface Row {
  seq: number;
  id: string;
  expires_at: string;
}

export class SqliteEndedSignInRepository implements EndedSignInRepository {
  private readonly file: string;
  private readonly insert: Statement;
  private readonly since: Statement;
  private readonly purge: Statement;

  constructor(private readonly db: Database) {
    this.file = db.name;
    [this.insert, this.since, this.purge] = withDatabaseErrors(this.file, () => [
      db.prepare("INSERT INTO ended_sign_ins (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"),
      db.prepare("SELECT seq, id, expires_at FROM ended_sign_ins WHERE seq > ? ORDER BY seq"),
      db.prepare("DELETE FROM ended_sign_ins WHERE expires_at <= ?"),
    ]);
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteEndedSignInRepository {
    return new SqliteEndedSignInRepository(openEndedSignInsDatabase(dataDir, options));
  }

  async record(ended: EndedSignIn): Promise<void> {
    withDatabaseErrors(this.file, () => this.insert.run(ended.id, new Date(ended.expiresAt).toISOString()));
  }

  async endedSince(position: number): Promise<EndedSignInsPage> {
    const rows = withDatabaseErrors(this.file, () => this.since.all(position) as Row[]);
    return {
      endedSignIns: rows.map((row) => ({ id: row.id, expiresAt: Date.parse(row.expires_at) })),
      position: rows.at(-1)?.seq ?? position,
    };
  }

  async purgeExpired(now: number): Promise<number> {
    // Stored times are UTC toISOString() text, so they compare as text in time order.
    return withDatabaseErrors(this.file, () => this.purge.run(new Date(now).toISOString()).changes);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
