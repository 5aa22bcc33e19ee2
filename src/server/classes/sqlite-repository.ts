// ClassRepository on SQLite (classes.db).
import type { Database, Statement } from "better-sqlite3";
import { withDatabaseErrors } from "../db/errors.ts";
import { openClassesDatabase } from "./classes-database.ts";
import type { ClassRecord, ClassRepository } from "./repository.ts";

interface Row {
  id: string;
  lab_id: string;
  starts_at: string;
  ends_at: string;
  expected: number;
  created_by: string;
  created_at: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

function toRecord(row: Row): ClassRecord {
  return {
    id: row.id,
    labId: row.lab_id,
    startsAt: Date.parse(row.starts_at),
    endsAt: Date.parse(row.ends_at),
    expected: row.expected,
    createdBy: row.created_by,
    createdAt: Date.parse(row.created_at),
  };
}

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
        iso(record.startsAt),
        iso(record.endsAt),
        record.expected,
        record.createdBy,
        iso(record.createdAt),
      ),
    );
  }

  async endingAfter(time: number): Promise<ClassRecord[]> {
    return withDatabaseErrors(this.file, () => (this.ending.all(iso(time)) as Row[]).map(toRecord));
  }

  async get(id: string): Promise<ClassRecord | undefined> {
    const row = withDatabaseErrors(this.file, () => this.byId.get(id) as Row | undefined);
    return row && toRecord(row);
  }

  async remove(id: string): Promise<boolean> {
    return withDatabaseErrors(this.file, () => this.deleteById.run(id).changes > 0);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
