// The sign-out tables in PostgreSQL: the same shape as ended-sign-ins.db (ended-sign-ins-database.ts).
import type { PostgresSchema } from "../../db/postgres/database.ts";

export const postgresEndedSignInsSchema: PostgresSchema = {
  component: "ended-sign-ins",
  migrations: [
    {
      name: "ended sign-ins",
      sql: `
        -- ended_at is the database's clock at the insert (clock_timestamp, not the transaction's
        -- start): pollers re-read recent rows by it, see postgres-repository.ts.
        CREATE TABLE ended_sign_ins (
          seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
          id text PRIMARY KEY,
          ended_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          expires_at timestamptz NOT NULL
        );
        CREATE INDEX ended_sign_ins_by_ended_at ON ended_sign_ins (ended_at);
        CREATE INDEX ended_sign_ins_by_expiry ON ended_sign_ins (expires_at);
      `,
    },
    {
      name: "sign-in cut-offs",
      sql: `
        -- One row per person: every sign-in of theirs issued up to issued_up_to is over. Read whole
        -- on every poll, so no seq is needed.
        CREATE TABLE sign_in_cut_offs (
          username text PRIMARY KEY,
          issued_up_to timestamptz NOT NULL,
          expires_at timestamptz NOT NULL
        );
      `,
    },
  ],
};
