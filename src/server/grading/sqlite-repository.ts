// GradingRepository on SQLite (better-sqlite3). Statements run synchronously; every multi-row
// change is one transaction, so a failure leaves nothing half-written.
//
// WARNING: a write outside a transaction commits on its own, and that commit can fail (a full disk,
// a disk error). .run() throws then; .get() reads one row and resets the statement without looking
// at how it ended, so INSERT … RETURNING through .get() hands back the id of a row never stored.
import type { Database, Statement } from "better-sqlite3";
import type { GradingRunStatus } from "../../common/grading-api.ts";
import type { SessionResult } from "../../common/grading.ts";
import { jsonFromText } from "../db/column-values.ts";
import { withDatabaseErrors } from "../db/errors.ts";
import { openGradingDatabase } from "./grading-database.ts";
import type {
  FinishRun,
  GradingRepository,
  LatestResult,
  NewRun,
  NewSelfCheck,
  RunItemRecord,
  RunRecord,
  SelfCheckRecord,
} from "./repository.ts";
import {
  toItem,
  toLatestResult,
  toRun,
  toSelfCheck,
  type ItemRow,
  type LatestResultRow,
  type RunRow,
  type SelfCheckRow,
} from "./rows.ts";

const runColumns = `
  r.id, r.lab_id, r.started_by, r.status, r.created_at, r.finished_at, r.selected_session_ids, r.rerun_of,
  count(i.session_id) AS total, count(i.result) AS done, coalesce(sum(i.gradable = 0), 0) AS ungradable
  FROM grading_runs r LEFT JOIN run_items i ON i.run_id = r.id`;

export class SqliteGradingRepository implements GradingRepository {
  private readonly file: string;
  private readonly sql: ReturnType<typeof prepareStatements>;

  constructor(private readonly db: Database) {
    this.file = db.name;
    this.sql = withDatabaseErrors(this.file, () => prepareStatements(db));
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteGradingRepository {
    return new SqliteGradingRepository(openGradingDatabase(dataDir, options));
  }

  async recordSelfCheck(check: NewSelfCheck): Promise<SelfCheckRecord> {
    return this.guard(() => {
      const inserted = this.sql.insertSelfCheck.run({
        session_id: check.sessionId,
        lab_id: check.labId,
        owner: check.owner,
        checked_at: check.checkedAt,
        result: JSON.stringify(check.result),
      });
      return { ...check, id: Number(inserted.lastInsertRowid) };
    });
  }

  async listSelfChecks(sessionId: string, limit: number): Promise<SelfCheckRecord[]> {
    return this.guard(() =>
      (this.sql.listSelfChecks.all(sessionId, limit) as SelfCheckRow[]).map((row) =>
        toSelfCheck(row, jsonFromText),
      ),
    );
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    return this.guard(() =>
      this.db
        .transaction(() => {
          this.sql.insertRun.run({
            id: run.id,
            lab_id: run.labId,
            started_by: run.startedBy,
            created_at: run.createdAt,
            selected_session_ids:
              run.selectedSessionIds === null ? null : JSON.stringify(run.selectedSessionIds),
            rerun_of: run.rerunOf,
          });
          run.items.forEach((item, position) =>
            this.sql.insertItem.run({
              run_id: run.id,
              session_id: item.sessionId,
              owner: item.owner,
              section: item.section ?? null,
              position,
            }),
          );
          return this.requireRun(run.id);
        })
        .immediate(),
    );
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.guard(() => this.findRun(runId));
  }

  async listRuns(filter: { labId?: string; status?: GradingRunStatus }): Promise<RunRecord[]> {
    return this.guard(() =>
      (
        this.sql.listRuns.all({ lab_id: filter.labId ?? null, status: filter.status ?? null }) as RunRow[]
      ).map((row) => toRun(row, jsonFromText)),
    );
  }

  async listRunItems(runId: string): Promise<RunItemRecord[]> {
    return this.guard(() =>
      (this.sql.listItems.all(runId) as ItemRow[]).map((row) => toItem(row, jsonFromText)),
    );
  }

  async recordResult(
    runId: string,
    sessionId: string,
    result: SessionResult,
  ): Promise<{ item: RunItemRecord; recorded: boolean }> {
    if (result.sessionId !== sessionId) {
      throw new Error(
        `A result for session ${result.sessionId} cannot be recorded as session ${sessionId}'s.`,
      );
    }
    return this.guard(() =>
      this.db
        .transaction(() => {
          const recorded = this.completeItem(runId, sessionId, result);
          const row = this.sql.getItem.get(runId, sessionId) as ItemRow | undefined;
          if (!row) throw new Error(`Grading run ${runId} has no session ${sessionId}.`);
          return { item: toItem(row, jsonFromText), recorded };
        })
        .immediate(),
    );
  }

  async finishRun(finish: FinishRun): Promise<RunRecord> {
    return this.guard(() =>
      this.db
        .transaction(() => {
          const run = this.requireRun(finish.runId);
          if (run.status !== "running") return run;
          for (const { sessionId, result } of finish.closingResults ?? []) {
            this.completeItem(finish.runId, sessionId, result);
          }
          const { pending } = this.sql.countPending.get(finish.runId) as { pending: number };
          if (pending > 0) {
            throw new Error(
              `Grading run ${finish.runId} cannot finish: ${pending} sessions have no result yet.`,
            );
          }
          this.sql.finishRun.run({ id: finish.runId, status: finish.status, finished_at: finish.finishedAt });
          return this.requireRun(finish.runId);
        })
        .immediate(),
    );
  }

  async latestResults(labId: string): Promise<LatestResult[]> {
    return this.guard(() =>
      (this.sql.latestResults.all(labId) as LatestResultRow[]).map((row) =>
        toLatestResult(row, jsonFromText),
      ),
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** True when this call recorded the result; false when the item already had one. */
  private completeItem(runId: string, sessionId: string, result: SessionResult): boolean {
    const update = this.sql.completeItem.run({
      run_id: runId,
      session_id: sessionId,
      result: JSON.stringify(result),
      gradable: result.gradable ? 1 : 0,
      graded_at: result.gradedAt,
    });
    return update.changes === 1;
  }

  private findRun(runId: string): RunRecord | undefined {
    const row = this.sql.getRun.get(runId) as RunRow | undefined;
    return row ? toRun(row, jsonFromText) : undefined;
  }

  private requireRun(runId: string): RunRecord {
    const run = this.findRun(runId);
    if (!run) throw new Error(`There is no grading run ${runId}.`);
    return run;
  }

  private guard<T>(work: () => T): T {
    return withDatabaseErrors(this.file, work);
  }
}

function prepareStatements(db: Database) {
  const statement = (sql: string): Statement => db.prepare(sql);
  return {
    insertSelfCheck: statement(
      `INSERT INTO self_checks (session_id, lab_id, owner, checked_at, result)
       VALUES (@session_id, @lab_id, @owner, @checked_at, @result)`,
    ),
    listSelfChecks: statement(
      `SELECT id, session_id, lab_id, owner, checked_at, result FROM self_checks
       WHERE session_id = ? ORDER BY id DESC LIMIT ?`,
    ),
    insertRun: statement(
      `INSERT INTO grading_runs (id, lab_id, started_by, status, created_at, selected_session_ids, rerun_of)
       VALUES (@id, @lab_id, @started_by, 'running', @created_at, @selected_session_ids, @rerun_of)`,
    ),
    insertItem: statement(
      `INSERT INTO run_items (run_id, session_id, position, owner, section, status)
       VALUES (@run_id, @session_id, @position, @owner, @section, 'pending')`,
    ),
    getRun: statement(`SELECT ${runColumns} WHERE r.id = ? GROUP BY r.id`),
    listRuns: statement(
      `SELECT ${runColumns}
       WHERE (@lab_id IS NULL OR r.lab_id = @lab_id) AND (@status IS NULL OR r.status = @status)
       GROUP BY r.id ORDER BY r.created_at DESC, r.rowid DESC`,
    ),
    listItems: statement(
      `SELECT run_id, session_id, owner, section, status, result FROM run_items WHERE run_id = ? ORDER BY position`,
    ),
    getItem: statement(
      `SELECT run_id, session_id, owner, section, status, result FROM run_items WHERE run_id = ? AND session_id = ?`,
    ),
    // Only a pending item takes a result: this is what makes recording idempotent.
    completeItem: statement(
      `UPDATE run_items SET status = 'done', result = @result, gradable = @gradable, graded_at = @graded_at
       WHERE run_id = @run_id AND session_id = @session_id AND status = 'pending'`,
    ),
    countPending: statement(
      `SELECT count(*) AS pending FROM run_items WHERE run_id = ? AND status = 'pending'`,
    ),
    finishRun: statement(
      `UPDATE grading_runs SET status = @status, finished_at = @finished_at WHERE id = @id AND status = 'running'`,
    ),
    latestResults: statement(
      `SELECT run_id, section, result FROM (
         SELECT i.run_id, i.owner, i.section, i.result, row_number() OVER (
           PARTITION BY i.owner ORDER BY i.gradable DESC, i.graded_at DESC, r.created_at DESC, r.rowid DESC
         ) AS rank
         FROM run_items i JOIN grading_runs r ON r.id = i.run_id
         WHERE r.lab_id = ? AND i.status = 'done'
       ) WHERE rank = 1 ORDER BY owner`,
    ),
  };
}
