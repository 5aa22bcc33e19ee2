// The tail of a console recording (recording-writer.ts): once a recording's head (the header and its
// chunks) is full, the last output rolls through the tail, replaced whole on each write instead of
// appended.
import type { PostgresMigration } from "../db/postgres/migrate.ts";

export const recordingsTailMigration: PostgresMigration = {
  name: "console recording tails",
  sql: `
    -- tail holds the tail's event lines, served after the chunks; NULL while the head has room.
    -- tail_bytes is its length in UTF-8, counted by the console as bytes is. capped is no longer
    -- read (a full head now goes on in the tail); its default lets the console stop writing it
    -- while a replica of the version before, during an upgrade, still does.
    ALTER TABLE console_recordings
      ADD COLUMN tail text,
      ADD COLUMN tail_bytes bigint NOT NULL DEFAULT 0,
      ALTER COLUMN capped SET DEFAULT false;
  `,
};
