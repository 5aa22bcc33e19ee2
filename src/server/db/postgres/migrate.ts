// Schema changes for PostgreSQL as an append-only list per store, like the SQLite files' user_version:
// lab_console_schema counts the migrations each store has applied. Never edit or reorder a shipped
// migration; add a new one.
import { DatabaseUnavailableError } from "../errors.ts";
import type { PostgresSchema, Queryable } from "./database.ts";

export interface PostgresMigration {
  /** Shown in errors and logs. */
  name: string;
  sql: string;
}

// Any fixed number: every console replica takes the same lock, so only one migrates at a time.
const migrationLock = 7_353_661;

/** Applies what the store has not seen yet. Runs inside the caller's transaction: all of it, or none. */
export async function migratePostgres(
  client: Queryable,
  schema: PostgresSchema,
  label: string,
): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1)", [migrationLock]);
  await client.query(
    "CREATE TABLE IF NOT EXISTS lab_console_schema (component text PRIMARY KEY, version integer NOT NULL)",
  );
  const [row] = await client.query<{ version: number }>(
    "SELECT version FROM lab_console_schema WHERE component = $1",
    [schema.component],
  );
  const applied = row?.version ?? 0;
  const { component, migrations } = schema;
  if (applied > migrations.length) {
    throw new DatabaseUnavailableError(
      `The ${component} tables in ${label} were written by a newer Lab Console (schema ${applied}; this one ` +
        `knows ${migrations.length}). Upgrade the console, or restore an older backup.`,
    );
  }
  if (applied === migrations.length) return;
  for (const migration of migrations.slice(applied)) await client.query(migration.sql);
  await client.query(
    `INSERT INTO lab_console_schema (component, version) VALUES ($1, $2)
     ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
    [component, migrations.length],
  );
}
