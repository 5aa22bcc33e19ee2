// The audit table in PostgreSQL: the same shape as audit.db (audit-database.ts).
import type { PostgresSchema } from "../db/postgres/database.ts";

export const postgresAuditSchema: PostgresSchema = {
  component: "audit",
  migrations: [
    {
      name: "audit log",
      sql: `
        -- An identity never hands an id out twice, so "before id" paging stays stable.
        CREATE TABLE audit_log (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          at timestamptz NOT NULL,
          actor text NOT NULL,
          actor_role text,
          action text NOT NULL,
          session_id text,
          lab_id text,
          owner text,
          details jsonb NOT NULL,
          ip text,
          user_agent text
        );
        CREATE INDEX audit_by_actor ON audit_log (actor, id);
        CREATE INDEX audit_by_owner ON audit_log (owner, id);
        CREATE INDEX audit_by_session ON audit_log (session_id, id);
        CREATE INDEX audit_by_action ON audit_log (action, id);
        CREATE INDEX audit_by_at ON audit_log (at);
      `,
    },
    {
      name: "audit entries name the session's section",
      sql: "ALTER TABLE audit_log ADD COLUMN section text;",
    },
  ],
};
