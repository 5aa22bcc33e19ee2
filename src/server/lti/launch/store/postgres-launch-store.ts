// LtiLaunchStore on PostgreSQL (pg), chosen by DATABASE_URL: what every replica shares.
import { PostgresDatabase, type PostgresOptions } from "../../../db/postgres/database.ts";
import { postgresLtiLaunchesSchema } from "./postgres-schema.ts";
import type { LtiLaunchStore, OneTimeKind, StoredPlatform, StoredToolKey } from "./repository.ts";
import { keyOfRow, platformOfRow, type KeyRow, type PlatformRow } from "./rows.ts";

export class PostgresLtiLaunchStore implements LtiLaunchStore {
  constructor(private readonly db: PostgresDatabase) {}

  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresLtiLaunchStore> {
    return new PostgresLtiLaunchStore(
      await PostgresDatabase.open(url, postgresLtiLaunchesSchema, {
        statementTimeoutMs: 8_000,
        queryTimeoutMs: 10_000,
        ...options,
      }),
    );
  }

  async keys(): Promise<StoredToolKey[]> {
    return (await this.db.query<KeyRow>("SELECT * FROM lti_tool_keys ORDER BY created_at, kid")).map(
      keyOfRow,
    );
  }

  async addKey(key: StoredToolKey): Promise<void> {
    await this.db.query(
      "INSERT INTO lti_tool_keys (kid, public_jwk, sealed_private_jwk, created_at) VALUES ($1, $2, $3, $4)",
      [key.kid, key.publicJwk, key.sealedPrivateJwk, key.createdAt],
    );
  }

  async removeKey(kid: string): Promise<void> {
    await this.db.query("DELETE FROM lti_tool_keys WHERE kid = $1", [kid]);
  }

  async platforms(): Promise<StoredPlatform[]> {
    return (await this.db.query<PlatformRow>("SELECT * FROM lti_platforms ORDER BY registered_at, id")).map(
      platformOfRow,
    );
  }

  async addPlatform(platform: StoredPlatform): Promise<void> {
    await this.db.query(
      `INSERT INTO lti_platforms (id, name, issuer, client_id, auth_login_url, token_url, jwks_url,
         deployment_ids, status, registered_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
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
      ],
    );
  }

  async approvePlatform(id: string): Promise<StoredPlatform | undefined> {
    const [row] = await this.db.query<PlatformRow>(
      "UPDATE lti_platforms SET status = 'active' WHERE id = $1 RETURNING *",
      [id],
    );
    return row && platformOfRow(row);
  }

  async keep(kind: OneTimeKind, id: string, value: string, expiresAt: number): Promise<void> {
    await this.db.query("INSERT INTO lti_one_time (kind, id, value, expires_at) VALUES ($1, $2, $3, $4)", [
      kind,
      id,
      value,
      expiresAt,
    ]);
  }

  async peek(kind: OneTimeKind, id: string, now: number): Promise<string | undefined> {
    const [row] = await this.db.query<{ value: string }>(
      "SELECT value FROM lti_one_time WHERE kind = $1 AND id = $2 AND expires_at > $3",
      [kind, id, now],
    );
    return row?.value;
  }

  async take(kind: OneTimeKind, id: string, now: number): Promise<string | undefined> {
    const [row] = await this.db.query<{ value: string; expires_at: string }>(
      "DELETE FROM lti_one_time WHERE kind = $1 AND id = $2 RETURNING value, expires_at",
      [kind, id],
    );
    return row && Number(row.expires_at) > now ? row.value : undefined;
  }

  async useNonce(issuer: string, nonce: string, expiresAt: number): Promise<boolean> {
    const rows = await this.db.query(
      "INSERT INTO lti_nonces (issuer, nonce, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING nonce",
      [issuer, nonce, expiresAt],
    );
    return rows.length === 1;
  }

  async purge(now: number): Promise<void> {
    await this.db.query("DELETE FROM lti_one_time WHERE expires_at <= $1", [now]);
    await this.db.query("DELETE FROM lti_nonces WHERE expires_at <= $1", [now]);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
