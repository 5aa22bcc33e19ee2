// LtiGradesRepository on PostgreSQL (pg), chosen by DATABASE_URL: what every replica shows.
import { PostgresDatabase, type PostgresOptions, type Queryable } from "../../db/postgres/database.ts";
import { postgresLtiGradesSchema } from "./postgres-schema.ts";
import type {
  CourseRecord,
  CourseUpdate,
  LineItemRecord,
  LinkRecord,
  LtiGradesRepository,
  NewScore,
  OutboxState,
  RosterMemberRecord,
  ScoreFilter,
  ScoreRecord,
} from "./repository.ts";
import {
  noScores,
  toCourse,
  toLink,
  toRosterMember,
  toScore,
  toSections,
  type CourseRow,
  type LinkRow,
  type RosterMemberRow,
  type ScoreRow,
} from "./rows.ts";

export class PostgresLtiGradesRepository implements LtiGradesRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /** Short statements: a launch's few upserts, the outbox worker's reads and updates. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresLtiGradesRepository> {
    return new PostgresLtiGradesRepository(
      await PostgresDatabase.open(url, postgresLtiGradesSchema, {
        statementTimeoutMs: 8_000,
        queryTimeoutMs: 10_000,
        ...options,
      }),
    );
  }

  async saveCourse(course: CourseUpdate): Promise<void> {
    await this.db.query(
      `INSERT INTO lti_courses (id, platform_id, context_id, title, memberships_url, lineitems_url)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET
         title = coalesce(excluded.title, lti_courses.title),
         memberships_url = coalesce(excluded.memberships_url, lti_courses.memberships_url),
         lineitems_url = coalesce(excluded.lineitems_url, lti_courses.lineitems_url)`,
      [
        course.id,
        course.platformId,
        course.contextId,
        course.title,
        course.membershipsUrl,
        course.lineItemsUrl,
      ],
    );
  }

  async getCourse(id: string): Promise<CourseRecord | undefined> {
    const [row] = await this.db.query<CourseRow>("SELECT * FROM lti_courses WHERE id = $1", [id]);
    return row && toCourse(row);
  }

  // Text is ordered byte by byte (COLLATE "C"), as SQLite orders it.
  async listCourses(): Promise<(CourseRecord & { members: number })[]> {
    const rows = await this.db.query<CourseRow & { members: string }>(
      `SELECT c.*, (SELECT count(*) FROM lti_roster_members AS m WHERE m.course_id = c.id) AS members
       FROM lti_courses AS c ORDER BY c.title COLLATE "C" NULLS LAST, c.id COLLATE "C"`,
    );
    return rows.map((row) => ({ ...toCourse(row), members: Number(row.members) }));
  }

  async saveLink(link: LinkRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO lti_links
         (course_id, lab_id, username, user_id, resource_link_id, post_self_checks, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (course_id, lab_id, username) DO UPDATE SET
         user_id = excluded.user_id,
         resource_link_id = excluded.resource_link_id,
         post_self_checks = excluded.post_self_checks,
         updated_at = excluded.updated_at`,
      [
        link.courseId,
        link.labId,
        link.username,
        link.userId,
        link.resourceLinkId,
        link.postSelfChecks,
        link.updatedAt,
      ],
    );
  }

  async linksOf(username: string, labId: string): Promise<LinkRecord[]> {
    const rows = await this.db.query<LinkRow>(
      `SELECT * FROM lti_links WHERE username = $1 AND lab_id = $2 ORDER BY course_id COLLATE "C"`,
      [username, labId],
    );
    return rows.map(toLink);
  }

  async linkedLabs(): Promise<string[]> {
    const rows = await this.db.query<{ lab_id: string }>(
      `SELECT DISTINCT lab_id COLLATE "C" AS lab_id FROM lti_links ORDER BY 1`,
    );
    return rows.map((row) => row.lab_id);
  }

  async lineItem(courseId: string, labId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ url: string }>(
      "SELECT url FROM lti_line_items WHERE course_id = $1 AND lab_id = $2",
      [courseId, labId],
    );
    return row?.url;
  }

  async addLineItem(item: LineItemRecord): Promise<string> {
    await this.db.query(
      `INSERT INTO lti_line_items (course_id, lab_id, url) VALUES ($1, $2, $3)
       ON CONFLICT (course_id, lab_id) DO NOTHING`,
      [item.courseId, item.labId, item.url],
    );
    const stored = await this.lineItem(item.courseId, item.labId);
    if (stored === undefined) throw new Error(`The line item of ${item.labId} vanished while it was added.`);
    return stored;
  }

  async forgetLineItem(item: LineItemRecord): Promise<void> {
    await this.db.query("DELETE FROM lti_line_items WHERE course_id = $1 AND lab_id = $2 AND url = $3", [
      item.courseId,
      item.labId,
      item.url,
    ]);
  }

  async enqueueScore(score: NewScore): Promise<{ score: ScoreRecord; enqueued: boolean }> {
    return this.db.transaction(async (client) => {
      await lockPerson(client, score);
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO lti_scores (id, course_id, lab_id, username, user_id, source, source_id, score_given,
           score_maximum, graded_at, state, attempts, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', 0, $11, $11)
         ON CONFLICT (course_id, source, source_id) DO NOTHING
         RETURNING id`,
        [
          score.id,
          score.courseId,
          score.labId,
          score.username,
          score.userId,
          score.source,
          score.sourceId,
          score.scoreGiven,
          score.scoreMaximum,
          score.gradedAt,
          score.createdAt,
        ],
      );
      const enqueued = inserted.length > 0;
      if (enqueued) {
        await supersedeOutranked(client, score);
        if (await outranked(client, score, "any")) await supersedeOne(client, score.id);
      }
      const [row] = await client.query<ScoreRow>(
        "SELECT * FROM lti_scores WHERE course_id = $1 AND source = $2 AND source_id = $3",
        [score.courseId, score.source, score.sourceId],
      );
      if (!row) throw new Error(`The score ${score.sourceId} vanished while it was enqueued.`);
      return { score: toScore(row), enqueued };
    });
  }

  async getScore(id: string): Promise<ScoreRecord | undefined> {
    const [row] = await this.db.query<ScoreRow>("SELECT * FROM lti_scores WHERE id = $1", [id]);
    return row && toScore(row);
  }

  async dueScores(now: string, limit: number): Promise<ScoreRecord[]> {
    const rows = await this.db.query<ScoreRow>(
      `SELECT * FROM lti_scores WHERE state = 'pending' AND next_attempt_at <= $1
       ORDER BY created_at, id COLLATE "C" LIMIT $2`,
      [now, limit],
    );
    return rows.map(toScore);
  }

  async listScores(filter: ScoreFilter, limit: number): Promise<ScoreRecord[]> {
    const rows = await this.db.query<ScoreRow>(
      `SELECT * FROM lti_scores
       WHERE ($1::text IS NULL OR lab_id = $1) AND state = ANY($2::text[])
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
      [filter.labId ?? null, filter.states, limit],
    );
    return rows.map(toScore);
  }

  async countScores(filter: Omit<ScoreFilter, "states">): Promise<Record<OutboxState, number>> {
    const rows = await this.db.query<{ state: OutboxState; count: string }>(
      "SELECT state, count(*) AS count FROM lti_scores WHERE ($1::text IS NULL OR lab_id = $1) GROUP BY state",
      [filter.labId ?? null],
    );
    const counts = noScores();
    for (const row of rows) counts[row.state] = Number(row.count);
    return counts;
  }

  async markPosted(id: string, at: string): Promise<void> {
    await this.db.query(
      `UPDATE lti_scores SET state = 'posted', posted_at = $1, attempts = attempts + 1,
         next_attempt_at = NULL, last_error = NULL
       WHERE id = $2 AND state <> 'posted'`,
      [at, id],
    );
  }

  async markRetry(id: string, failure: { error: string; nextAttemptAt: string }): Promise<void> {
    await this.db.query(
      `UPDATE lti_scores SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2
       WHERE id = $3 AND state = 'pending'`,
      [failure.error, failure.nextAttemptAt, id],
    );
  }

  async markRefused(id: string, failure: { error: string }): Promise<void> {
    await this.db.query(
      `UPDATE lti_scores SET state = 'refused', attempts = attempts + 1, last_error = $1, next_attempt_at = NULL
       WHERE id = $2 AND state = 'pending'`,
      [failure.error, id],
    );
  }

  async retryScore(id: string, now: string): Promise<ScoreRecord | undefined> {
    const existing = await this.getScore(id);
    if (!existing) return undefined;
    return this.db.transaction(async (client) => {
      await lockPerson(client, existing);
      if (await outranked(client, existing, "live")) {
        await supersedeOne(client, id);
      } else {
        const retried = await client.query(
          `UPDATE lti_scores SET state = 'pending', attempts = 0, next_attempt_at = $1
           WHERE id = $2 AND state IN ('pending', 'refused')
           RETURNING id`,
          [now, id],
        );
        if (retried.length > 0) await supersedeOutranked(client, existing);
      }
      const [row] = await client.query<ScoreRow>("SELECT * FROM lti_scores WHERE id = $1", [id]);
      if (!row) throw new Error(`The score ${id} vanished while it was sent again.`);
      return toScore(row);
    });
  }

  async replaceRoster(courseId: string, members: RosterMemberRecord[], syncedAt: string): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query("DELETE FROM lti_roster_members WHERE course_id = $1", [courseId]);
      // One statement for the whole roster: a course of thousands is one round trip, not thousands.
      await client.query(
        `INSERT INTO lti_roster_members (course_id, user_id, username, name, email, role, sections, status)
         SELECT $1, m.user_id, m.username, m.name, m.email, m.role,
           ARRAY(SELECT jsonb_array_elements_text(m.sections)), m.status
         FROM jsonb_to_recordset($2::jsonb) AS m(
           user_id text, username text, name text, email text, role text, sections jsonb, status text
         )`,
        [
          courseId,
          JSON.stringify(
            members.map((member) => ({
              user_id: member.userId,
              username: member.username,
              name: member.name,
              email: member.email,
              role: member.role,
              sections: member.sections,
              status: member.status,
            })),
          ),
        ],
      );
      await client.query("UPDATE lti_courses SET roster_synced_at = $1 WHERE id = $2", [syncedAt, courseId]);
    });
  }

  async roster(courseId: string): Promise<RosterMemberRecord[]> {
    const rows = await this.db.query<RosterMemberRow>(
      `SELECT * FROM lti_roster_members WHERE course_id = $1
       ORDER BY name COLLATE "C" NULLS LAST, user_id COLLATE "C"`,
      [courseId],
    );
    return rows.map(toRosterMember);
  }

  async sectionsOf(courseId: string, userId: string): Promise<string[]> {
    const [row] = await this.db.query<Pick<RosterMemberRow, "sections">>(
      "SELECT sections FROM lti_roster_members WHERE course_id = $1 AND user_id = $2",
      [courseId, userId],
    );
    return row ? toSections(row.sections) : [];
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/**
 * Two replicas enqueueing or retrying for the same person at once would each miss the other's score
 * when deciding which is superseded: one at a time per (course, lab, username).
 */
async function lockPerson(client: Queryable, score: NewScore): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    JSON.stringify(["lti-score", score.courseId, score.labId, score.username]),
  ]);
}

// Ranks as repository.ts's OutboxState says: a run's score above any self-check, then the later graded.
const sibling = "course_id = $1 AND lab_id = $2 AND username = $3 AND id <> $4";
const rankParams = (score: NewScore) => [
  score.courseId,
  score.labId,
  score.username,
  score.id,
  score.source,
  score.gradedAt,
];

/** The pending scores of the same person that `score` outranks give way to it. */
async function supersedeOutranked(client: Queryable, score: NewScore): Promise<void> {
  await client.query(
    `UPDATE lti_scores SET state = 'superseded', next_attempt_at = NULL
     WHERE ${sibling} AND state = 'pending'
       AND (source = $5 AND graded_at < $6 OR $5 = 'run' AND source = 'self-check')`,
    rankParams(score),
  );
}

/** Another score of the same person outranks `score`: any, or only a pending or posted one ("live"). */
async function outranked(client: Queryable, score: NewScore, among: "any" | "live"): Promise<boolean> {
  const rows = await client.query(
    `SELECT 1 FROM lti_scores
     WHERE ${sibling} ${among === "live" ? "AND state IN ('pending', 'posted')" : ""}
       AND (source = $5 AND graded_at > $6 OR source = 'run' AND $5 = 'self-check')
     LIMIT 1`,
    rankParams(score),
  );
  return rows.length > 0;
}

async function supersedeOne(client: Queryable, id: string): Promise<void> {
  await client.query(
    `UPDATE lti_scores SET state = 'superseded', next_attempt_at = NULL
     WHERE id = $1 AND state IN ('pending', 'refused')`,
    [id],
  );
}
