// The announcements database: announcements.db in the data folder, apart from the others. Losing it
// loses what was announced and who dismissed it, never a session, a grade or the audit trail (each
// sending is audited with its text).
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../db/migrate.ts";
import { openDatabase } from "../db/open-database.ts";

export const announcementsDatabaseName = "announcements.db";

export const announcementsMigrations: readonly Migration[] = [
  {
    name: "announcements and dismissals",
    up: (db) =>
      db.exec(`
        CREATE TABLE announcements (
          id TEXT PRIMARY KEY,
          lab_id TEXT NOT NULL,
          section TEXT,
          class_id TEXT,
          author TEXT NOT NULL,
          text TEXT NOT NULL CHECK (length(text) > 0),
          created_at TEXT NOT NULL
        ) STRICT;
        CREATE INDEX announcements_by_lab ON announcements (lab_id, created_at);
        CREATE TABLE announcement_dismissals (
          announcement_id TEXT NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
          username TEXT NOT NULL,
          dismissed_at TEXT NOT NULL,
          PRIMARY KEY (announcement_id, username)
        ) STRICT;
      `),
  },
];

export function openAnnouncementsDatabase(
  dataDir: string,
  options: { busyTimeoutMs?: number } = {},
): Database {
  return openDatabase({
    file: path.join(dataDir, announcementsDatabaseName),
    migrations: announcementsMigrations,
    ...options,
  });
}
