// Schema changes as an append-only list: the database's user_version counts the ones applied.
// Never edit or reorder a shipped migration; add a new one.
import type { Database } from "better-sqlite3";
import { DatabaseUnavailableError } from "./errors.ts";

export interface Migration {
  /** Shown in errors and logs. */
  name: string;
  up: (db: Database) => void;
}

/** Applies the migrations the database has not seen yet, each in its own transaction. */
export function migrate(db: Database, migrations: readonly Migration[], file: string): void {
  const applied = db.pragma("user_version", { simple: true }) as number;
  if (applied > migrations.length) {
    throw new DatabaseUnavailableError(
      `The database ${file} was written by a newer Lab Console (schema ${applied}; this one knows ` +
        `${migrations.length}). Upgrade the console, or restore an older backup.`,
    );
  }
  migrations.slice(applied).forEach((migration, index) => {
    const version = applied + index + 1;
    // The version is bumped inside the same transaction, so a crash never leaves a change half-counted.
    db.transaction(() => {
      migration.up(db);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  });
}
