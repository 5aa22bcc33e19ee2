// The grading tables in PostgreSQL: the same shape as grading.db (grading-database.ts), in
// PostgreSQL's own types (timestamptz, jsonb, text[], boolean).
import type { PostgresSchema } from "../db/postgres/database.ts";

export const postgresGradingSchema: PostgresSchema = {
  component: "grading",
  migrations: [
    {
      name: "self-checks, grading runs and their items",
      sql: `
        CREATE TABLE self_checks (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          session_id text NOT NULL,
          owner text NOT NULL,
          lab_id text NOT NULL,
          result jsonb NOT NULL,
          checked_at timestamptz NOT NULL
        );
        CREATE INDEX self_checks_by_session ON self_checks (session_id, id);

        CREATE TABLE grading_runs (
          id text PRIMARY KEY,
          -- Creation order, for runs created in the same millisecond.
          seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
          lab_id text NOT NULL,
          started_by text NOT NULL,
          status text NOT NULL CHECK (status IN ('running', 'completed', 'interrupted')),
          created_at timestamptz NOT NULL,
          finished_at timestamptz,
          selected_session_ids text[],
          rerun_of text REFERENCES grading_runs (id),
          CHECK ((status = 'running') = (finished_at IS NULL))
        );
        CREATE INDEX grading_runs_by_lab ON grading_runs (lab_id, created_at);
        CREATE INDEX grading_runs_running ON grading_runs (status) WHERE status = 'running';

        -- (run_id, session_id) is the idempotency key of a result: one per session per run.
        CREATE TABLE run_items (
          run_id text NOT NULL REFERENCES grading_runs (id),
          session_id text NOT NULL,
          position integer NOT NULL,
          owner text NOT NULL,
          status text NOT NULL CHECK (status IN ('pending', 'done')),
          result jsonb,
          gradable boolean,
          graded_at timestamptz,
          PRIMARY KEY (run_id, session_id),
          CHECK ((status = 'done') = (result IS NOT NULL)),
          CHECK ((status = 'done') = (gradable IS NOT NULL AND graded_at IS NOT NULL))
        );
        CREATE INDEX run_items_by_owner ON run_items (owner);
      `,
    },
    {
      name: "the section of each run item's session",
      sql: "ALTER TABLE run_items ADD COLUMN section text",
    },
  ],
};
