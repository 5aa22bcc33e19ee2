// The LTI grades tables in PostgreSQL: the same shape as lti-grades.db (lti-grades-database.ts).
import type { PostgresSchema } from "../../db/postgres/database.ts";

export const postgresLtiGradesSchema: PostgresSchema = {
  component: "lti-grades",
  migrations: [
    {
      name: "courses, links, line items, score outbox and rosters",
      sql: `
        CREATE TABLE lti_courses (
          id text PRIMARY KEY,
          platform_id text NOT NULL,
          context_id text NOT NULL,
          title text,
          memberships_url text,
          lineitems_url text,
          roster_synced_at timestamptz,
          UNIQUE (platform_id, context_id)
        );
        CREATE TABLE lti_links (
          course_id text NOT NULL REFERENCES lti_courses (id),
          lab_id text NOT NULL,
          username text NOT NULL,
          user_id text NOT NULL,
          resource_link_id text NOT NULL,
          post_self_checks boolean NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (course_id, lab_id, username)
        );
        CREATE INDEX lti_links_by_person ON lti_links (username, lab_id);
        CREATE TABLE lti_line_items (
          course_id text NOT NULL REFERENCES lti_courses (id),
          lab_id text NOT NULL,
          url text NOT NULL,
          PRIMARY KEY (course_id, lab_id)
        );
        CREATE TABLE lti_scores (
          id text PRIMARY KEY,
          course_id text NOT NULL REFERENCES lti_courses (id),
          lab_id text NOT NULL,
          username text NOT NULL,
          user_id text NOT NULL,
          source text NOT NULL CHECK (source IN ('run', 'self-check')),
          source_id text NOT NULL,
          score_given double precision NOT NULL,
          score_maximum double precision NOT NULL,
          graded_at timestamptz NOT NULL,
          state text NOT NULL CHECK (state IN ('pending', 'posted', 'refused', 'superseded')),
          attempts integer NOT NULL,
          next_attempt_at timestamptz,
          last_error text,
          posted_at timestamptz,
          created_at timestamptz NOT NULL,
          UNIQUE (course_id, source, source_id)
        );
        CREATE INDEX lti_scores_due ON lti_scores (state, next_attempt_at);
        CREATE INDEX lti_scores_by_person ON lti_scores (course_id, lab_id, username, graded_at);
        CREATE INDEX lti_scores_newest ON lti_scores (created_at);
        CREATE TABLE lti_roster_members (
          course_id text NOT NULL REFERENCES lti_courses (id),
          user_id text NOT NULL,
          username text,
          name text,
          email text,
          role text CHECK (role IN ('student', 'ta', 'instructor')),
          sections text[] NOT NULL,
          status text NOT NULL CHECK (status IN ('Active', 'Inactive', 'Deleted')),
          PRIMARY KEY (course_id, user_id)
        );
      `,
    },
  ],
};
