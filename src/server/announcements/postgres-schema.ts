// The announcement tables in PostgreSQL: the same shape as announcements.db (announcements-database.ts).
import type { PostgresSchema } from "../db/postgres/database.ts";

export const postgresAnnouncementsSchema: PostgresSchema = {
  component: "announcements",
  migrations: [
    {
      name: "announcements and dismissals",
      sql: `
        CREATE TABLE announcements (
          id text PRIMARY KEY,
          lab_id text NOT NULL,
          section text,
          class_id text,
          author text NOT NULL,
          text text NOT NULL CHECK (length(text) > 0),
          created_at timestamptz NOT NULL
        );
        CREATE INDEX announcements_by_lab ON announcements (lab_id, created_at);
        CREATE TABLE announcement_dismissals (
          announcement_id text NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
          username text NOT NULL,
          dismissed_at timestamptz NOT NULL,
          PRIMARY KEY (announcement_id, username)
        );
      `,
    },
  ],
};
