// ClassRepository on PostgreSQL (pg), chosen by DATABASE_URL: the schedule every replica shares.
import { PostgresDatabase, type PostgresOptions } from "../db/postgres/database.ts";
import { postgresClassesSchema } from "./postgres-schema.ts";
import type { ClassRecord, ClassRepository } from "./repository.ts";
import { toClass, type ClassRow } from "./rows.ts";

export class PostgresClassRepository implements ClassRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /** Short reads and single-row writes, read by the warm pool every few seconds. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresClassRepository> {
    return new PostgresClassRepository(
      await PostgresDatabase.open(url, postgresClassesSchema, {
        statementTimeoutMs: 8_000,
        queryTimeoutMs: 10_000,
        ...options,
      }),
    );
  }

  async add(record: ClassRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO classes (id, lab_id, starts_at, ends_at, expected, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        record.id,
        record.labId,
        new Date(record.startsAt),
        new Date(record.endsAt),
        record.expected,
        record.createdBy,
        new Date(record.createdAt),
      ],
    );
  }

  async endingAfter(time: number): Promise<ClassRecord[]> {
    const rows = await this.db.query<ClassRow>(
      "SELECT * FROM classes WHERE ends_at > $1 ORDER BY starts_at, id",
      [new Date(time)],
    );
    return rows.map(toClass);
  }

  async get(id: string): Promise<ClassRecord | undefined> {
    const [row] = await this.db.query<ClassRow>("SELECT * FROM classes WHERE id = $1", [id]);
    return row && toClass(row);
  }

  async remove(id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>("DELETE FROM classes WHERE id = $1 RETURNING id", [id]);
    return rows.length > 0;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
