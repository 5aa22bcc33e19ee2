// The audit database: audit.db in the data folder, apart from grading.db so that either can be
// backed up, kept for its own retention period or moved away without touching the other.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../db/migrate.ts";
import { openDatabase } from "../db/open-database.ts";

export const auditDatabaseName = "audit.db";

export const auditMigrations: readonly Migration[] = [
  {
    name: "audit log",
    up: (db) =>
      db.exec(`
        -- AUTOINCREMENT: ids never come back, so "before id" paging stays stable.
        CREATE TABLE audit_log (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          at TEXT NOT NULL,
          actor TEXT NOT NULL,
          actor_role TEXT,
          action TEXT NOT NULL,
          session_id TEXT,
          lab_id TEXT,
          owner TEXT,
          details TEXT NOT NULL,
          ip TEXT,
          user_agent TEXT
        ) STRICT;
        CREATE INDEX audit_by_actor ON audit_log (actor, id);
        CREATE INDEX audit_by_owner ON audit_log (owner, id);
        CREATE INDEX audit_by_session ON audit_log (session_id, id);
        CREATE INDEX audit_by_action ON audit_log (action, id);
        CREATE INDEX audit_by_at ON audit_log (at);
      `),
  },
  {
    name: "audit entries name the session's section",
    up: (db) => db.exec("ALTER TABLE audit_log ADD COLUMN section TEXT"),
  },
];

export function openAuditDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Database {
  return openDatabase({
    file: path.join(dataDir, auditDatabaseName),
    migrations: auditMigrations,
    ...options,
  });
}
