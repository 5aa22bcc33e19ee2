// The classes table in PostgreSQL: the same shape as classes.db (classes-database.ts).
import type { PostgresSchema } from "../db/postgres/database.ts";

export const postgresClassesSchema: PostgresSchema = {
  component: "classes",
  migrations: [
    {
      name: "scheduled classes",
      sql: `
        CREATE TABLE classes (
          id text PRIMARY KEY,
          lab_id text NOT NULL,
          starts_at timestamptz NOT NULL,
          ends_at timestamptz NOT NULL,
          expected integer NOT NULL CHECK (expected > 0),
          created_by text NOT NULL,
          created_at timestamptz NOT NULL,
          CHECK (starts_at < ends_at)
        );
        CREATE INDEX classes_by_end ON classes (ends_at);
      `,
    },
  ],
};
