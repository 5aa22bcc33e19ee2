// ClassRepository on SQLite (classes.db).
import type { Database, Statement } from "better-sqlite3";
import { sqliteTimeOf } from "../db/column-values.ts";
import { withDatabaseErrors } from "../db/errors.ts";
import { openClassesDatabase } from "./classes-database.ts";
import type { ClassRecord, ClassRepository } from "./repository.ts";
import { toClass, type ClassRow } from "./rows.ts";

export class SqliteClassRepository implements ClassRepository {
  private readonly file: string;
  private readonly insert: Statement;
  private readonly ending: Statement;
  private readonly byId: Statement;
  private readonly deleteById: Statement;

  constructor(private readonly db: Database) {
    this.file = db.name;
    // Stored times are UTC toISOString() text, so they compare as text in time order.
    [this.insert, this.ending, this.byId, this.deleteById] = withDatabaseErrors(this.file, () => [
      db.prepare(
        `INSERT INTO classes (id, lab_id, starts_at, ends_at, expected, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      db.prepare("SELECT * FROM classes WHERE ends_at > ? ORDER BY starts_at, id"),
      db.prepare("SELECT * FROM classes WHERE id = ?"),
      db.prepare("DELETE FROM classes WHERE id = ?"),
    ]);
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteClassRepository {
    return new SqliteClassRepository(openClassesDatabase(dataDir, options));
  }

  async add(record: ClassRecord): Promise<void> {
    withDatabaseErrors(this.file, () =>
      this.insert.run(
        record.id,
        record.labId,
        sqliteTimeOf(record.startsAt),
        sqliteTimeOf(record.endsAt),
        record.expected,
        record.createdBy,
        sqliteTimeOf(record.createdAt),
      ),
    );
  }

  async endingAfter(time: number): Promise<ClassRecord[]> {
    return withDatabaseErrors(this.file, () =>
      (this.ending.all(sqliteTimeOf(time)) as ClassRow[]).map(toClass),
    );
  }

  async get(id: string): Promise<ClassRecord | undefined> {
    const row = withDatabaseErrors(this.file, () => this.byId.get(id) as ClassRow | undefined);
    return row && toClass(row);
  }

  async remove(id: string): Promise<boolean> {
    return withDatabaseErrors(this.file, () => this.deleteById.run(id).changes > 0);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
