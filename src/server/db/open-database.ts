// Opens a SQLite file the way every Lab Console database is used: WAL, durable commits, foreign
// keys on, a short wait for locks, and the schema migrated before anything else touches it.
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { DatabaseUnavailableError, withDatabaseErrors } from "./errors.ts";
import { migrate, type Migration } from "./migrate.ts";

export interface OpenDatabaseOptions {
  file: string;
  migrations: readonly Migration[];
  /**
   * How long a statement waits for another connection's lock before failing with
   * database_unavailable. WARNING: better-sqlite3 is synchronous, so the wait blocks the event loop;
   * keep it short. Only outside programs (a backup, the sqlite3 shell) ever hold the lock.
   */
  busyTimeoutMs?: number;
}

export const defaultBusyTimeoutMs = 1000;

export function openDatabase(options: OpenDatabaseOptions): Database.Database {
  const { file, migrations, busyTimeoutMs = defaultBusyTimeoutMs } = options;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
  } catch (error) {
    throw new DatabaseUnavailableError(
      `The folder for the database ${file} cannot be created: ${(error as Error).message}`,
      error,
    );
  }
  return withDatabaseErrors(file, () => {
    const isNew = !existsSync(file);
    const db = new Database(file);
    try {
      // Grades and the audit log are for the BFF alone. SQLite gives its -wal and -shm files the
      // database file's mode, so they follow; an existing file keeps what its operator chose.
      if (isNew) chmodSync(file, 0o600);
      db.pragma(`busy_timeout = ${Math.max(0, Math.round(busyTimeoutMs))}`);
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") {
        throw new DatabaseUnavailableError(
          `The database ${file} cannot use write-ahead logging (journal mode stayed "${String(mode)}"); ` +
            "put the data folder on a local disk.",
        );
      }
      // WAL with synchronous=NORMAL may lose the last commits on power loss; a result the console has
      // acknowledged must survive that, so every commit reaches the disk.
      db.pragma("synchronous = FULL");
      db.pragma("foreign_keys = ON");
      migrate(db, migrations, file);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  });
}
