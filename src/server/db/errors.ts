// What can go wrong with the database file itself, in words an operator can act on. Constraint
// violations and other programming errors are not translated: they are bugs, not outages.
import Database from "better-sqlite3";

/** The database cannot be used right now; nothing of the failed operation was written. */
export class DatabaseUnavailableError extends Error {
  readonly code = "database_unavailable";

  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

const problemsByCode: [prefix: string, describe: (file: string) => string][] = [
  ["SQLITE_BUSY", (file) => `The database ${file} is locked by another program. Try again in a moment.`],
  ["SQLITE_LOCKED", (file) => `The database ${file} is locked by another program. Try again in a moment.`],
  ["SQLITE_FULL", (file) => `The disk holding the database ${file} is full. Free some space and try again.`],
  [
    "SQLITE_READONLY",
    (file) => `The database ${file} is read-only. The console needs to write to it (and to its folder).`,
  ],
  [
    "SQLITE_CORRUPT",
    (file) => `The database ${file} is damaged. Restore it from a backup, or move it away to start afresh.`,
  ],
  [
    "SQLITE_NOTADB",
    (file) => `${file} is not a database the console can read. Restore it from a backup, or move it away.`,
  ],
  [
    "SQLITE_CANTOPEN",
    (file) => `The database ${file} cannot be opened. Check that its folder exists and is writable.`,
  ],
  [
    "SQLITE_PERM",
    (file) => `The console is not allowed to open the database ${file}. Check its permissions.`,
  ],
  [
    "SQLITE_IOERR",
    (file) => `Reading or writing the database ${file} failed (a disk error). Check the disk.`,
  ],
];

/** A database-level failure as DatabaseUnavailableError; anything else unchanged. */
export function translateDatabaseError(error: unknown, file: string): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  const match = problemsByCode.find(([prefix]) => error.code.startsWith(prefix));
  return match ? new DatabaseUnavailableError(match[1](file), error) : error;
}

/** Runs `work`, turning database-level failures into DatabaseUnavailableError. */
export function withDatabaseErrors<T>(file: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw translateDatabaseError(error, file);
  }
}
