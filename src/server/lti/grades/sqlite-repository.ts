// LtiGradesRepository on SQLite (lti-grades.db).
import type { Database } from "better-sqlite3";
import { withDatabaseErrors } from "../../db/errors.ts";
import { openLtiGradesDatabase } from "./lti-grades-database.ts";
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

// Stored times are UTC toISOString() text, so they compare as text in time order.
function prepareStatements(db: Database) {
  return {
    saveCourse: db.prepare(
      `INSERT INTO lti_courses (id, platform_id, context_id, title, memberships_url, lineitems_url)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET
         title = coalesce(excluded.title, title),
         memberships_url = coalesce(excluded.memberships_url, memberships_url),
         lineitems_url = coalesce(excluded.lineitems_url, lineitems_url)`,
    ),
    getCourse: db.prepare("SELECT * FROM lti_courses WHERE id = ?"),
    listCourses: db.prepare(
      `SELECT c.*, (SELECT count(*) FROM lti_roster_members AS m WHERE m.course_id = c.id) AS members
       FROM lti_courses AS c ORDER BY c.title NULLS LAST, c.id`,
    ),
    saveLink: db.prepare(
      `INSERT INTO lti_links
         (course_id, lab_id, username, user_id, resource_link_id, post_self_checks, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (course_id, lab_id, username) DO UPDATE SET
         user_id = excluded.user_id,
         resource_link_id = excluded.resource_link_id,
         post_self_checks = excluded.post_self_checks,
         updated_at = excluded.updated_at`,
    ),
    linksOf: db.prepare("SELECT * FROM lti_links WHERE username = ? AND lab_id = ? ORDER BY course_id"),
    linkedLabs: db.prepare("SELECT DISTINCT lab_id FROM lti_links ORDER BY lab_id"),
    lineItem: db.prepare("SELECT url FROM lti_line_items WHERE course_id = ? AND lab_id = ?"),
    addLineItem: db.prepare(
      `INSERT INTO lti_line_items (course_id, lab_id, url) VALUES (?, ?, ?)
       ON CONFLICT (course_id, lab_id) DO NOTHING`,
    ),
    forgetLineItem: db.prepare("DELETE FROM lti_line_items WHERE course_id = ? AND lab_id = ? AND url = ?"),
    insertScore: db.prepare(
      `INSERT INTO lti_scores (id, course_id, lab_id, username, user_id, source, source_id, score_given,
         score_maximum, graded_at, state, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
       ON CONFLICT (course_id, source, source_id) DO NOTHING`,
    ),
    scoreBySource: db.prepare(
      "SELECT * FROM lti_scores WHERE course_id = ? AND source = ? AND source_id = ?",
    ),
    // Ranks as repository.ts's OutboxState says: a run's score above any self-check, then the later graded.
    supersedeOutranked: db.prepare(
      `UPDATE lti_scores SET state = 'superseded', next_attempt_at = NULL
       WHERE course_id = @courseId AND lab_id = @labId AND username = @username AND id <> @id
         AND state = 'pending'
         AND (source = @source AND graded_at < @gradedAt OR @source = 'run' AND source = 'self-check')`,
    ),
    outranked: db.prepare(
      `SELECT 1 FROM lti_scores
       WHERE course_id = @courseId AND lab_id = @labId AND username = @username AND id <> @id
         AND (@anyState = 1 OR state IN ('pending', 'posted'))
         AND (source = @source AND graded_at > @gradedAt OR source = 'run' AND @source = 'self-check')
       LIMIT 1`,
    ),
    supersede: db.prepare(
      `UPDATE lti_scores SET state = 'superseded', next_attempt_at = NULL
       WHERE id = ? AND state IN ('pending', 'refused')`,
    ),
    getScore: db.prepare("SELECT * FROM lti_scores WHERE id = ?"),
    dueScores: db.prepare(
      `SELECT * FROM lti_scores WHERE state = 'pending' AND next_attempt_at <= ?
       ORDER BY created_at, id LIMIT ?`,
    ),
    listScores: db.prepare(
      `SELECT * FROM lti_scores WHERE (@lab IS NULL OR lab_id = @lab) AND state IN (SELECT value FROM json_each(@states))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    ),
    countScores: db.prepare(
      "SELECT state, count(*) AS count FROM lti_scores WHERE (@lab IS NULL OR lab_id = @lab) GROUP BY state",
    ),
    markPosted: db.prepare(
      `UPDATE lti_scores SET state = 'posted', posted_at = ?, attempts = attempts + 1,
         next_attempt_at = NULL, last_error = NULL
       WHERE id = ? AND state <> 'posted'`,
    ),
    markRetry: db.prepare(
      `UPDATE lti_scores SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?
       WHERE id = ? AND state = 'pending'`,
    ),
    markRefused: db.prepare(
      `UPDATE lti_scores SET state = 'refused', attempts = attempts + 1, last_error = ?, next_attempt_at = NULL
       WHERE id = ? AND state = 'pending'`,
    ),
    retryScore: db.prepare(
      `UPDATE lti_scores SET state = 'pending', attempts = 0, next_attempt_at = ?
       WHERE id = ? AND state IN ('pending', 'refused')`,
    ),
    deleteRoster: db.prepare("DELETE FROM lti_roster_members WHERE course_id = ?"),
    insertMember: db.prepare(
      `INSERT INTO lti_roster_members (course_id, user_id, username, name, email, role, sections, status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    rosterSynced: db.prepare("UPDATE lti_courses SET roster_synced_at = ? WHERE id = ?"),
    roster: db.prepare(
      "SELECT * FROM lti_roster_members WHERE course_id = ? ORDER BY name NULLS LAST, user_id",
    ),
    sectionsOf: db.prepare("SELECT sections FROM lti_roster_members WHERE course_id = ? AND user_id = ?"),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class SqliteLtiGradesRepository implements LtiGradesRepository {
  private readonly file: string;
  private readonly statements: Statements;

  constructor(private readonly db: Database) {
    this.file = db.name;
    this.statements = withDatabaseErrors(this.file, () => prepareStatements(db));
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteLtiGradesRepository {
    return new SqliteLtiGradesRepository(openLtiGradesDatabase(dataDir, options));
  }

  private run<T>(work: (statements: Statements) => T): T {
    return withDatabaseErrors(this.file, () => work(this.statements));
  }

  async saveCourse(course: CourseUpdate): Promise<void> {
    this.run((s) =>
      s.saveCourse.run(
        course.id,
        course.platformId,
        course.contextId,
        course.title,
        course.membershipsUrl,
        course.lineItemsUrl,
      ),
    );
  }

  async getCourse(id: string): Promise<CourseRecord | undefined> {
    const row = this.run((s) => s.getCourse.get(id) as CourseRow | undefined);
    return row && toCourse(row);
  }

  async listCourses(): Promise<(CourseRecord & { members: number })[]> {
    const rows = this.run((s) => s.listCourses.all() as (CourseRow & { members: number })[]);
    return rows.map((row) => ({ ...toCourse(row), members: Number(row.members) }));
  }

  async saveLink(link: LinkRecord): Promise<void> {
    this.run((s) =>
      s.saveLink.run(
        link.courseId,
        link.labId,
        link.username,
        link.userId,
        link.resourceLinkId,
        link.postSelfChecks ? 1 : 0,
        link.updatedAt,
      ),
    );
  }

  async linksOf(username: string, labId: string): Promise<LinkRecord[]> {
    const rows = this.run((s) => s.linksOf.all(username, labId) as LinkRow[]);
    return rows.map(toLink);
  }

  async linkedLabs(): Promise<string[]> {
    const rows = this.run((s) => s.linkedLabs.all() as { lab_id: string }[]);
    return rows.map((row) => row.lab_id);
  }

  async lineItem(courseId: string, labId: string): Promise<string | undefined> {
    const row = this.run((s) => s.lineItem.get(courseId, labId) as { url: string } | undefined);
    return row?.url;
  }

  async addLineItem(item: LineItemRecord): Promise<string> {
    return this.run((s) => {
      s.addLineItem.run(item.courseId, item.labId, item.url);
      return (s.lineItem.get(item.courseId, item.labId) as { url: string }).url;
    });
  }

  async forgetLineItem(item: LineItemRecord): Promise<void> {
    this.run((s) => s.forgetLineItem.run(item.courseId, item.labId, item.url));
  }

  async enqueueScore(score: NewScore): Promise<{ score: ScoreRecord; enqueued: boolean }> {
    return this.run((s) =>
      this.db
        .transaction(() => {
          const inserted = s.insertScore.run(
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
            score.createdAt,
          );
          if (inserted.changes > 0) {
            const rank = rankOf(score);
            s.supersedeOutranked.run(rank);
            if (s.outranked.get({ ...rank, anyState: 1 })) s.supersede.run(score.id);
          }
          const row = s.scoreBySource.get(score.courseId, score.source, score.sourceId) as ScoreRow;
          return { score: toScore(row), enqueued: inserted.changes > 0 };
        })
        .immediate(),
    );
  }

  async getScore(id: string): Promise<ScoreRecord | undefined> {
    const row = this.run((s) => s.getScore.get(id) as ScoreRow | undefined);
    return row && toScore(row);
  }

  async dueScores(now: string, limit: number): Promise<ScoreRecord[]> {
    const rows = this.run((s) => s.dueScores.all(now, limit) as ScoreRow[]);
    return rows.map(toScore);
  }

  async listScores(filter: ScoreFilter, limit: number): Promise<ScoreRecord[]> {
    const rows = this.run(
      (s) =>
        s.listScores.all({
          lab: filter.labId ?? null,
          states: JSON.stringify(filter.states),
          limit,
        }) as ScoreRow[],
    );
    return rows.map(toScore);
  }

  async countScores(filter: Omit<ScoreFilter, "states">): Promise<Record<OutboxState, number>> {
    const rows = this.run(
      (s) => s.countScores.all({ lab: filter.labId ?? null }) as { state: OutboxState; count: number }[],
    );
    return Object.fromEntries([
      ...Object.entries(noScores()),
      ...rows.map((row) => [row.state, Number(row.count)]),
    ]) as Record<OutboxState, number>;
  }

  async markPosted(id: string, at: string): Promise<void> {
    this.run((s) => s.markPosted.run(at, id));
  }

  async markRetry(id: string, failure: { error: string; nextAttemptAt: string }): Promise<void> {
    this.run((s) => s.markRetry.run(failure.error, failure.nextAttemptAt, id));
  }

  async markRefused(id: string, failure: { error: string }): Promise<void> {
    this.run((s) => s.markRefused.run(failure.error, id));
  }

  async retryScore(id: string, now: string): Promise<ScoreRecord | undefined> {
    return this.run((s) =>
      this.db
        .transaction(() => {
          const before = s.getScore.get(id) as ScoreRow | undefined;
          if (!before) return undefined;
          const rank = rankOf(toScore(before));
          if (s.outranked.get({ ...rank, anyState: 0 })) s.supersede.run(id);
          else if (s.retryScore.run(now, id).changes > 0) s.supersedeOutranked.run(rank);
          return toScore(s.getScore.get(id) as ScoreRow);
        })
        .immediate(),
    );
  }

  async replaceRoster(courseId: string, members: RosterMemberRecord[], syncedAt: string): Promise<void> {
    this.run((s) =>
      this.db
        .transaction(() => {
          s.deleteRoster.run(courseId);
          for (const member of members) {
            s.insertMember.run(
              courseId,
              member.userId,
              member.username,
              member.name,
              member.email,
              member.role,
              JSON.stringify(member.sections),
              member.status,
            );
          }
          s.rosterSynced.run(syncedAt, courseId);
        })
        .immediate(),
    );
  }

  async roster(courseId: string): Promise<RosterMemberRecord[]> {
    const rows = this.run((s) => s.roster.all(courseId) as RosterMemberRow[]);
    return rows.map(toRosterMember);
  }

  async sectionsOf(courseId: string, userId: string): Promise<string[]> {
    const row = this.run(
      (s) => s.sectionsOf.get(courseId, userId) as Pick<RosterMemberRow, "sections"> | undefined,
    );
    return row ? toSections(row.sections) : [];
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** What the ranking statements ask of a score. */
function rankOf(score: NewScore) {
  const { id, courseId, labId, username, source, gradedAt } = score;
  return { id, courseId, labId, username, source, gradedAt };
}
