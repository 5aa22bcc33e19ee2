// The LTI launch database: lti-launches.db in the data folder. Losing it loses the tool's keys (new
// ones are made, and each LMS fetches them from /api/lti/jwks again), dynamically registered
// platforms, and launches in flight; never a grade or a sign-in.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../../../db/migrate.ts";
import { openDatabase } from "../../../db/open-database.ts";

export const ltiLaunchesDatabaseName = "lti-launches.db";

export const ltiLaunchesMigrations: readonly Migration[] = [
  {
    name: "tool keys, registered platforms, one-time values and nonces",
    up: (db) =>
      db.exec(`
        CREATE TABLE lti_tool_keys (
          kid TEXT PRIMARY KEY,
          public_jwk TEXT NOT NULL,
          sealed_private_jwk TEXT NOT NULL,
          created_at INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE lti_platforms (
          id TEXT PRIMARY KEY,
          name TEXT NOT NULL,
          issuer TEXT NOT NULL,
          client_id TEXT NOT NULL,
          auth_login_url TEXT NOT NULL,
          token_url TEXT NOT NULL,
          jwks_url TEXT NOT NULL,
          deployment_ids TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('active', 'pending')),
          registered_at INTEGER NOT NULL,
          UNIQUE (issuer, client_id)
        ) STRICT;
        CREATE TABLE lti_one_time (
          kind TEXT NOT NULL,
          id TEXT NOT NULL,
          value TEXT NOT NULL,
          expires_at INTEGER NOT NULL,
          PRIMARY KEY (kind, id)
        ) STRICT;
        CREATE TABLE lti_nonces (
          issuer TEXT NOT NULL,
          nonce TEXT NOT NULL,
          expires_at INTEGER NOT NULL,
          PRIMARY KEY (issuer, nonce)
        ) STRICT;
      `),
  },
];

export function openLtiLaunchesDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Database {
  return openDatabase({
    file: path.join(dataDir, ltiLaunchesDatabaseName),
    migrations: ltiLaunchesMigrations,
    ...options,
  });
}
