// The grading database: grading.db in the data folder, and its schema as a list of migrations.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../db/migrate.ts";
import { openDatabase } from "../db/open-database.ts";

export const gradingDatabaseName = "grading.db";

export const gradingMigrations: readonly Migration[] = [
  {
    name: "self-checks, grading runs and their items",
    up: (db) =>
      db.exec(`
        CREATE TABLE self_checks (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL,
          owner TEXT NOT NULL,
          lab_id TEXT NOT NULL,
          result TEXT NOT NULL,
          checked_at TEXT NOT NULL
        ) STRICT;
        CREATE INDEX self_checks_by_session ON self_checks (session_id, id);

        CREATE TABLE grading_runs (
          id TEXT PRIMARY KEY,
          lab_id TEXT NOT NULL,
          started_by TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'interrupted')),
          created_at TEXT NOT NULL,
          finished_at TEXT,
          selected_session_ids TEXT,
          rerun_of TEXT REFERENCES grading_runs (id),
          CHECK ((status = 'running') = (finished_at IS NULL))
        ) STRICT;
        CREATE INDEX grading_runs_by_lab ON grading_runs (lab_id, created_at);
        CREATE INDEX grading_runs_running ON grading_runs (status) WHERE status = 'running';

        -- (run_id, session_id) is the idempotency key of a result: one per session per run.
        CREATE TABLE run_items (
          run_id TEXT NOT NULL REFERENCES grading_runs (id),
          session_id TEXT NOT NULL,
          position INTEGER NOT NULL,
          owner TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('pending', 'done')),
          result TEXT,
          gradable INTEGER,
          graded_at TEXT,
          PRIMARY KEY (run_id, session_id),
          CHECK ((status = 'done') = (result IS NOT NULL)),
          CHECK ((status = 'done') = (gradable IS NOT NULL AND graded_at IS NOT NULL))
        ) STRICT;
        CREATE INDEX run_items_by_owner ON run_items (owner);
      `),
  },
  {
    // Sections reach grading: a TA of some sections sees their students' items and grades only.
    // Items recorded before have none, which only staff who act on every section see.
    name: "the section of each run item's session",
    up: (db) => db.exec("ALTER TABLE run_items ADD COLUMN section TEXT"),
  },
];

export function openGradingDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Database {
  return openDatabase({
    file: path.join(dataDir, gradingDatabaseName),
    migrations: gradingMigrations,
    ...options,
  });
}
