// One mapping per table, for both stores: SQLite and PostgreSQL rows have the same columns (bigint
// columns arrive from pg as text, hence Number()).
import type { StoredInteger } from "../../../db/column-values.ts";
import type { StoredPlatform, StoredToolKey } from "./repository.ts";

export interface KeyRow {
  kid: string;
  public_jwk: string;
  sealed_private_jwk: string;
  created_at: StoredInteger;
}

export interface PlatformRow {
  id: string;
  name: string;
  issuer: string;
  client_id: string;
  auth_login_url: string;
  token_url: string;
  jwks_url: string;
  deployment_ids: string;
  status: "active" | "pending";
  registered_at: StoredInteger;
}

export const keyOfRow = (row: KeyRow): StoredToolKey => ({
  kid: row.kid,
  publicJwk: row.public_jwk,
  sealedPrivateJwk: row.sealed_private_jwk,
  createdAt: Number(row.created_at),
});

export const platformOfRow = (row: PlatformRow): StoredPlatform => ({
  id: row.id,
  name: row.name,
  issuer: row.issuer,
  clientId: row.client_id,
  authLoginUrl: row.auth_login_url,
  tokenUrl: row.token_url,
  jwksUrl: row.jwks_url,
  deploymentIds: JSON.parse(row.deployment_ids) as string[],
  status: row.status,
  registeredAt: Number(row.registered_at),
});
