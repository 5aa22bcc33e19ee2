// LtiLaunchStore on SQLite (lti-launches.db).
import type { Database } from "better-sqlite3";
import { withDatabaseErrors } from "../../../db/errors.ts";
import { openLtiLaunchesDatabase } from "./launch-database.ts";
import type { LtiLaunchStore, OneTimeKind, StoredPlatform, StoredToolKey } from "./repository.ts";
import { keyOfRow, platformOfRow, type KeyRow, type PlatformRow } from "./rows.ts";

export class SqliteLtiLaunchStore implements LtiLaunchStore {
  private readonly file: string;

  constructor(private readonly db: Database) {
    this.file = db.name;
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteLtiLaunchStore {
    return new SqliteLtiLaunchStore(openLtiLaunchesDatabase(dataDir, options));
  }

  async keys(): Promise<StoredToolKey[]> {
    return this.run(() =>
      (this.db.prepare("SELECT * FROM lti_tool_keys ORDER BY created_at, kid").all() as KeyRow[]).map(
        keyOfRow,
      ),
    );
  }

  async addKey(key: StoredToolKey): Promise<void> {
    this.run(() =>
      this.db
        .prepare(
          "INSERT INTO lti_tool_keys (kid, public_jwk, sealed_private_jwk, created_at) VALUES (?, ?, ?, ?)",
        )
        .run(key.kid, key.publicJwk, key.sealedPrivateJwk, key.createdAt),
    );
  }

  async removeKey(kid: string): Promise<void> {
    this.run(() => this.db.prepare("DELETE FROM lti_tool_keys WHERE kid = ?").run(kid));
  }

  async platforms(): Promise<StoredPlatform[]> {
    return this.run(() =>
      (this.db.prepare("SELECT * FROM lti_platforms ORDER BY registered_at, id").all() as PlatformRow[]).map(
        platformOfRow,
      ),
    );
  }

  async addPlatform(platform: StoredPlatform): Promise<void> {
    this.run(() =>
      this.db
        .prepare(
          `INSERT INTO lti_platforms (id, name, issuer, client_id, auth_login_url, token_url, jwks_url,
             deployment_ids, status, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          platform.id,
          platform.name,
          platform.issuer,
          platform.clientId,
          platform.authLoginUrl,
          platform.tokenUrl,
          platform.jwksUrl,
          JSON.stringify(platform.deploymentIds),
          platform.status,
          platform.registeredAt,
        ),
    );
  }

  async approvePlatform(id: string): Promise<StoredPlatform | undefined> {
    return this.run(() => {
      const row = this.db
        .prepare("UPDATE lti_platforms SET status = 'active' WHERE id = ? RETURNING *")
        .get(id) as PlatformRow | undefined;
      return row && platformOfRow(row);
    });
  }

  async keep(kind: OneTimeKind, id: string, value: string, expiresAt: number): Promise<void> {
    this.run(() =>
      this.db
        .prepare("INSERT INTO lti_one_time (kind, id, value, expires_at) VALUES (?, ?, ?, ?)")
        .run(kind, id, value, expiresAt),
    );
  }

  async peek(kind: OneTimeKind, id: string, now: number): Promise<string | undefined> {
    return this.run(
      () =>
        (
          this.db
            .prepare("SELECT value FROM lti_one_time WHERE kind = ? AND id = ? AND expires_at > ?")
            .get(kind, id, now) as { value: string } | undefined
        )?.value,
    );
  }

  async take(kind: OneTimeKind, id: string, now: number): Promise<string | undefined> {
    return this.run(() => {
      // One statement: two replicas taking the same id at once cannot both get it.
      const row = this.db
        .prepare("DELETE FROM lti_one_time WHERE kind = ? AND id = ? RETURNING value, expires_at")
        .get(kind, id) as { value: string; expires_at: number } | undefined;
      return row && row.expires_at > now ? row.value : undefined;
    });
  }

  async useNonce(issuer: string, nonce: string, expiresAt: number): Promise<boolean> {
    return this.run(
      () =>
        this.db
          .prepare(
            "INSERT INTO lti_nonces (issuer, nonce, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
          )
          .run(issuer, nonce, expiresAt).changes === 1,
    );
  }

  async purge(now: number): Promise<void> {
    this.run(() => {
      this.db.prepare("DELETE FROM lti_one_time WHERE expires_at <= ?").run(now);
      this.db.prepare("DELETE FROM lti_nonces WHERE expires_at <= ?").run(now);
    });
  }

  async close(): Promise<void> {
    this.db.close();
  }

  private run<T>(work: () => T): T {
    return withDatabaseErrors(this.file, work);
  }
}
