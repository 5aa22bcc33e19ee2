// The LTI launch tables in PostgreSQL: the same shape as lti-launches.db (launch-database.ts).
import type { PostgresSchema } from "../../../db/postgres/database.ts";

export const postgresLtiLaunchesSchema: PostgresSchema = {
  component: "lti-launches",
  migrations: [
    {
      name: "tool keys, registered platforms, one-time values and nonces",
      sql: `
        CREATE TABLE lti_tool_keys (
          kid text PRIMARY KEY,
          public_jwk text NOT NULL,
          sealed_private_jwk text NOT NULL,
          created_at bigint NOT NULL
        );
        CREATE TABLE lti_platforms (
          id text PRIMARY KEY,
          name text NOT NULL,
          issuer text NOT NULL,
          client_id text NOT NULL,
          auth_login_url text NOT NULL,
          token_url text NOT NULL,
          jwks_url text NOT NULL,
          deployment_ids text NOT NULL,
          status text NOT NULL CHECK (status IN ('active', 'pending')),
          registered_at bigint NOT NULL,
          UNIQUE (issuer, client_id)
        );
        CREATE TABLE lti_one_time (
          kind text NOT NULL,
          id text NOT NULL,
          value text NOT NULL,
          expires_at bigint NOT NULL,
          PRIMARY KEY (kind, id)
        );
        CREATE TABLE lti_nonces (
          issuer text NOT NULL,
          nonce text NOT NULL,
          expires_at bigint NOT NULL,
          PRIMARY KEY (issuer, nonce)
        );
      `,
    },
  ],
};
