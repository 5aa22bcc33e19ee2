// The classes database: classes.db in the data folder, apart from the others. It holds the schedule
// instructors entered; losing it loses the schedule, never a session or a grade.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../db/migrate.ts";
import { openDatabase } from "../db/open-database.ts";

export const classesDatabaseName = "classes.db";

export const classesMigrations: readonly Migration[] = [
  {
    name: "scheduled classes",
    up: (db) =>
      db.exec(`
        CREATE TABLE classes (
          id TEXT PRIMARY KEY,
          lab_id TEXT NOT NULL,
          starts_at TEXT NOT NULL,
          ends_at TEXT NOT NULL,
          expected INTEGER NOT NULL CHECK (expected > 0),
          created_by TEXT NOT NULL,
          created_at TEXT NOT NULL,
          CHECK (starts_at < ends_at)
        ) STRICT;
        CREATE INDEX classes_by_end ON classes (ends_at);
      `),
  },
];

export function openClassesDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Database {
  return openDatabase({
    file: path.join(dataDir, classesDatabaseName),
    migrations: classesMigrations,
    ...options,
  });
}
