// The LTI grades database: lti-grades.db in the data folder, apart from the others. It holds the
// score outbox, so losing it loses the scores not yet in a gradebook; they come back from grading.db
// at the next start for runs (the reconciliation in lti-grades.ts), not for self-checks.
import path from "node:path";
import type { Database } from "better-sqlite3";
import type { Migration } from "../../db/migrate.ts";
import { openDatabase } from "../../db/open-database.ts";

export const ltiGradesDatabaseName = "lti-grades.db";

export const ltiGradesMigrations: readonly Migration[] = [
  {
    name: "courses, links, line items, score outbox and rosters",
    up: (db) =>
      db.exec(`
        CREATE TABLE lti_courses (
          id TEXT PRIMARY KEY,
          platform_id TEXT NOT NULL,
          context_id TEXT NOT NULL,
          title TEXT,
          memberships_url TEXT,
          lineitems_url TEXT,
          roster_synced_at TEXT,
          UNIQUE (platform_id, context_id)
        ) STRICT;
        CREATE TABLE lti_links (
          course_id TEXT NOT NULL REFERENCES lti_courses (id),
          lab_id TEXT NOT NULL,
          username TEXT NOT NULL,
          user_id TEXT NOT NULL,
          resource_link_id TEXT NOT NULL,
          post_self_checks INTEGER NOT NULL CHECK (post_self_checks IN (0, 1)),
          updated_at TEXT NOT NULL,
          PRIMARY KEY (course_id, lab_id, username)
        ) STRICT;
        CREATE INDEX lti_links_by_person ON lti_links (username, lab_id);
        CREATE TABLE lti_line_items (
          course_id TEXT NOT NULL REFERENCES lti_courses (id),
          lab_id TEXT NOT NULL,
          url TEXT NOT NULL,
          PRIMARY KEY (course_id, lab_id)
        ) STRICT;
        CREATE TABLE lti_scores (
          id TEXT PRIMARY KEY,
          course_id TEXT NOT NULL REFERENCES lti_courses (id),
          lab_id TEXT NOT NULL,
          username TEXT NOT NULL,
          user_id TEXT NOT NULL,
          source TEXT NOT NULL CHECK (source IN ('run', 'self-check')),
          source_id TEXT NOT NULL,
          score_given REAL NOT NULL,
          score_maximum REAL NOT NULL,
          graded_at TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('pending', 'posted', 'refused', 'superseded')),
          attempts INTEGER NOT NULL,
          next_attempt_at TEXT,
          last_error TEXT,
          posted_at TEXT,
          created_at TEXT NOT NULL,
          UNIQUE (course_id, source, source_id)
        ) STRICT;
        CREATE INDEX lti_scores_due ON lti_scores (state, next_attempt_at);
        CREATE INDEX lti_scores_by_person ON lti_scores (course_id, lab_id, username, graded_at);
        CREATE INDEX lti_scores_newest ON lti_scores (created_at);
        CREATE TABLE lti_roster_members (
          course_id TEXT NOT NULL REFERENCES lti_courses (id),
          user_id TEXT NOT NULL,
          username TEXT,
          name TEXT,
          email TEXT,
          role TEXT CHECK (role IN ('student', 'ta', 'instructor')),
          sections TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('Active', 'Inactive', 'Deleted')),
          PRIMARY KEY (course_id, user_id)
        ) STRICT;
      `),
  },
];

export function openLtiGradesDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Database {
  return openDatabase({
    file: path.join(dataDir, ltiGradesDatabaseName),
    migrations: ltiGradesMigrations,
    ...options,
  });
}
