// Console recordings in PostgreSQL, when replicas share DATABASE_URL: the same bytes as
// DATA_DIR/recordings/<session>.cast, so every replica lists and serves every recording and a console
// that moves to another replica goes on appending to the same one.
import type { PostgresSchema } from "../db/postgres/database.ts";
import { recordingsTailMigration } from "./postgres-tail-migration.ts";

export const postgresRecordingsSchema: PostgresSchema = {
  component: "recordings",
  migrations: [
    {
      name: "console recordings",
      sql: `
        -- header is the .cast's first line, exactly as served; owner, lab_id and started_at repeat
        -- it for lists and permissions. bytes counts the whole .cast (header line included) and
        -- chunks how many rows console_recording_chunks holds for it, which numbers the next one.
        CREATE TABLE console_recordings (
          session_id text PRIMARY KEY,
          owner text NOT NULL,
          lab_id text NOT NULL,
          header text NOT NULL,
          started_at timestamptz NOT NULL,
          last_written_at timestamptz NOT NULL,
          bytes bigint NOT NULL,
          chunks integer NOT NULL,
          capped boolean NOT NULL
        );
        CREATE INDEX console_recordings_by_last_write ON console_recordings (last_written_at);
        -- One row per appended batch of event lines; the .cast is the header, then these by seq.
        CREATE TABLE console_recording_chunks (
          session_id text NOT NULL REFERENCES console_recordings ON DELETE CASCADE,
          seq integer NOT NULL,
          text text NOT NULL,
          PRIMARY KEY (session_id, seq)
        );
      `,
    },
    {
      name: "console recordings by lab and by owner",
      sql: `
        -- The recordings list filters by lab, by student, or both, newest first.
        CREATE INDEX console_recordings_by_lab ON console_recordings (lab_id, started_at);
        CREATE INDEX console_recordings_by_owner ON console_recordings (owner, started_at);
      `,
    },
    recordingsTailMigration,
  ],
};
