// The sign-out database: ended-sign-ins.db in the data folder, apart from grading.db and audit.db.
// It holds single sign-outs and per-person cut-offs (repository.ts).
// It holds nothing worth a backup (every row is useless once its cookie has expired, at most 12 hours
// later), so it can be deleted while the console is stopped; that only lets signed-out cookies back in.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../../db/migrate.ts";
import { openDatabase } from "../../db/open-database.ts";

export const endedSignInsDatabaseName = "ended-sign-ins.db";

export const endedSignInsMigrations: readonly Migration[] = [
  {
    name: "ended sign-ins",
    up: (db) =>
      db.exec(`
        -- AUTOINCREMENT: a seq is never handed out twice, even after the newest rows are
        -- purged, so a replica polling "after position" never skips a new row.
        CREATE TABLE ended_sign_ins (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          id TEXT NOT NULL UNIQUE,
          ended_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
          expires_at TEXT NOT NULL
        ) STRICT;
        CREATE INDEX ended_sign_ins_by_expiry ON ended_sign_ins (expires_at);
      `),
  },
  {
    name: "sign-in cut-offs",
    up: (db) =>
      db.exec(`
        -- One row per person: every sign-in of theirs issued up to issued_up_to is over. Read whole
        -- on every poll, so no seq is needed.
        CREATE TABLE sign_in_cut_offs (
          username TEXT PRIMARY KEY,
          issued_up_to TEXT NOT NULL,
          expires_at TEXT NOT NULL
        ) STRICT;
      `),
  },
];

export function openEndedSignInsDatabase(
  dataDir: string,
  options: { busyTimeoutMs?: number } = {},
): Database {
  return openDatabase({
    file: path.join(dataDir, endedSignInsDatabaseName),
    migrations: endedSignInsMigrations,
    ...options,
  });
}
