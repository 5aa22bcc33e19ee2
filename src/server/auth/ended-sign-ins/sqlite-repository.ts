// EndedSignInRepository on SQLite (ended-sign-ins.db). Writers take the database's one write lock
// and get their seq under it, so rows become visible in seq order: "after position" is exact.
import type { Database, Statement } from "better-sqlite3";
import { sqliteTimeOf } from "../../db/column-values.ts";
import { withDatabaseErrors } from "../../db/errors.ts";
import { openEndedSignInsDatabase } from "./ended-sign-ins-database.ts";
import type { EndedSignIn, EndedSignInRepository, EndedSignInsPage, SignInCutOff } from "./repository.ts";
import { toCutOff, toEndedSignIn, type CutOffRow, type EndedSignInRow } from "./rows.ts";

interface Row extends EndedSignInRow {
  seq: number;
}

export class SqliteEndedSignInRepository implements EndedSignInRepository {
  private readonly file: string;
  private readonly insert: Statement;
  private readonly since: Statement;
  private readonly purge: Statement;
  private readonly insertCutOff: Statement;
  private readonly liveCutOffs: Statement;
  private readonly purgeCutOffs: Statement;

  constructor(private readonly db: Database) {
    this.file = db.name;
    // Stored times are UTC toISOString() text, so they compare (and max()) as text in time order.
    [this.insert, this.since, this.purge, this.insertCutOff, this.liveCutOffs, this.purgeCutOffs] =
      withDatabaseErrors(this.file, () => [
        db.prepare("INSERT INTO ended_sign_ins (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"),
        db.prepare("SELECT seq, id, expires_at FROM ended_sign_ins WHERE seq > ? ORDER BY seq"),
        db.prepare("DELETE FROM ended_sign_ins WHERE expires_at <= ?"),
        db.prepare(
          `INSERT INTO sign_in_cut_offs (username, issued_up_to, expires_at) VALUES (?, ?, ?)
           ON CONFLICT (username) DO UPDATE SET
             issued_up_to = max(issued_up_to, excluded.issued_up_to),
             expires_at = max(expires_at, excluded.expires_at)`,
        ),
        db.prepare(
          "SELECT username, issued_up_to, expires_at FROM sign_in_cut_offs WHERE expires_at > ? ORDER BY username",
        ),
        db.prepare("DELETE FROM sign_in_cut_offs WHERE expires_at <= ?"),
      ]);
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteEndedSignInRepository {
    return new SqliteEndedSignInRepository(openEndedSignInsDatabase(dataDir, options));
  }

  async record(ended: EndedSignIn): Promise<void> {
    withDatabaseErrors(this.file, () => this.insert.run(ended.id, sqliteTimeOf(ended.expiresAt)));
  }

  async endedSince(position: number): Promise<EndedSignInsPage> {
    const rows = withDatabaseErrors(this.file, () => this.since.all(position) as Row[]);
    return {
      endedSignIns: rows.map(toEndedSignIn),
      position: rows.at(-1)?.seq ?? position,
    };
  }

  async recordCutOff(cutOff: SignInCutOff): Promise<void> {
    withDatabaseErrors(this.file, () =>
      this.insertCutOff.run(cutOff.username, sqliteTimeOf(cutOff.issuedUpTo), sqliteTimeOf(cutOff.expiresAt)),
    );
  }

  async cutOffs(now: number): Promise<SignInCutOff[]> {
    const rows = withDatabaseErrors(this.file, () => this.liveCutOffs.all(sqliteTimeOf(now)) as CutOffRow[]);
    return rows.map(toCutOff);
  }

  async purgeExpired(now: number): Promise<number> {
    const cutOff = sqliteTimeOf(now);
    return withDatabaseErrors(this.file, () =>
      this.db.transaction(() => this.purge.run(cutOff).changes + this.purgeCutOffs.run(cutOff).changes)(),
    );
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
