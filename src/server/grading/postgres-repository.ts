// GradingRepository on PostgreSQL (pg), chosen by DATABASE_URL. Every multi-row change is one
// transaction; row locks (not a file lock, as in SQLite) keep two replicas from recording one
// result twice.
import type { GradingRunStatus } from "../../common/grading-api.ts";
import type { SessionResult } from "../../common/grading.ts";
import { jsonAsReturned } from "../db/column-values.ts";
import { PostgresDatabase, type PostgresOptions, type Queryable } from "../db/postgres/database.ts";
import { postgresGradingSchema } from "./postgres-schema.ts";
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

const selectRuns = `
  SELECT r.id, r.lab_id, r.started_by, r.status, r.created_at, r.finished_at, r.selected_session_ids,
    r.rerun_of, count(i.session_id)::int AS total, count(i.result)::int AS done,
    (count(*) FILTER (WHERE NOT i.gradable))::int AS ungradable
  FROM grading_runs r LEFT JOIN run_items i ON i.run_id = r.id`;

const selectItems = `SELECT run_id, session_id, owner, section, status, result FROM run_items`;

export class PostgresGradingRepository implements GradingRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /** Connects, and creates or upgrades the grading tables. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresGradingRepository> {
    return new PostgresGradingRepository(await PostgresDatabase.open(url, postgresGradingSchema, options));
  }

  async recordSelfCheck(check: NewSelfCheck): Promise<SelfCheckRecord> {
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO self_checks (session_id, lab_id, owner, checked_at, result)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [check.sessionId, check.labId, check.owner, check.checkedAt, JSON.stringify(check.result)],
    );
    return { ...check, id: Number(row?.id) };
  }

  async listSelfChecks(sessionId: string, limit: number): Promise<SelfCheckRecord[]> {
    const rows = await this.db.query<SelfCheckRow>(
      `SELECT id, session_id, lab_id, owner, checked_at, result FROM self_checks
       WHERE session_id = $1 ORDER BY id DESC LIMIT $2`,
      [sessionId, limit],
    );
    return rows.map((row) => toSelfCheck(row, jsonAsReturned));
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    return this.db.transaction(async (client) => {
      await client.query(
        `INSERT INTO grading_runs (id, lab_id, started_by, status, created_at, selected_session_ids, rerun_of)
         VALUES ($1, $2, $3, 'running', $4, $5, $6)`,
        [run.id, run.labId, run.startedBy, run.createdAt, run.selectedSessionIds, run.rerunOf],
      );
      // One statement for all items, however many sessions the run grades.
      await client.query(
        `INSERT INTO run_items (run_id, session_id, position, owner, section, status)
         SELECT $1, item.session_id, item.position - 1, item.owner, item.section, 'pending'
         FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS item (session_id, owner, section, position)`,
        [
          run.id,
          run.items.map((item) => item.sessionId),
          run.items.map((item) => item.owner),
          run.items.map((item) => item.section ?? null),
        ],
      );
      return requireRun(client, run.id);
    });
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return findRun(this.db, runId);
  }

  async listRuns(filter: { labId?: string; status?: GradingRunStatus }): Promise<RunRecord[]> {
    const rows = await this.db.query<RunRow>(
      `${selectRuns}
       WHERE ($1::text IS NULL OR r.lab_id = $1) AND ($2::text IS NULL OR r.status = $2)
       GROUP BY r.id ORDER BY r.created_at DESC, r.seq DESC`,
      [filter.labId ?? null, filter.status ?? null],
    );
    return rows.map((row) => toRun(row, jsonAsReturned));
  }

  async listRunItems(runId: string): Promise<RunItemRecord[]> {
    const rows = await this.db.query<ItemRow>(`${selectItems} WHERE run_id = $1 ORDER BY position`, [runId]);
    return rows.map((row) => toItem(row, jsonAsReturned));
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
    return this.db.transaction(async (client) => {
      const recorded = await completeItem(client, runId, sessionId, result);
      const [row] = await client.query<ItemRow>(`${selectItems} WHERE run_id = $1 AND session_id = $2`, [
        runId,
        sessionId,
      ]);
      if (!row) throw new Error(`Grading run ${runId} has no session ${sessionId}.`);
      return { item: toItem(row, jsonAsReturned), recorded };
    });
  }

  async finishRun(finish: FinishRun): Promise<RunRecord> {
    return this.db.transaction(async (client) => {
      // Locks the run: a result recorded meanwhile waits, and then sees the finished run.
      const locked = await client.query("SELECT 1 FROM grading_runs WHERE id = $1 FOR UPDATE", [
        finish.runId,
      ]);
      if (locked.length === 0) throw new Error(`There is no grading run ${finish.runId}.`);
      const run = await requireRun(client, finish.runId);
      if (run.status !== "running") return run;
      for (const { sessionId, result } of finish.closingResults ?? []) {
        await completeItem(client, finish.runId, sessionId, result);
      }
      const [pending] = await client.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM run_items WHERE run_id = $1 AND status = 'pending'",
        [finish.runId],
      );
      if (pending && pending.count > 0) {
        throw new Error(
          `Grading run ${finish.runId} cannot finish: ${pending.count} sessions have no result yet.`,
        );
      }
      await client.query(
        "UPDATE grading_runs SET status = $2, finished_at = $3 WHERE id = $1 AND status = 'running'",
        [finish.runId, finish.status, finish.finishedAt],
      );
      return requireRun(client, finish.runId);
    });
  }

  async latestResults(labId: string): Promise<LatestResult[]> {
    // COLLATE "C": owners in byte order whatever the database's locale, as SQLite orders them.
    const rows = await this.db.query<LatestResultRow>(
      `SELECT DISTINCT ON (i.owner COLLATE "C") i.run_id, i.section, i.result
       FROM run_items i JOIN grading_runs r ON r.id = i.run_id
       WHERE r.lab_id = $1 AND i.status = 'done'
       ORDER BY i.owner COLLATE "C", i.gradable DESC, i.graded_at DESC, r.created_at DESC, r.seq DESC`,
      [labId],
    );
    return rows.map((row) => toLatestResult(row, jsonAsReturned));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** True when this call recorded the result; false when the item already had one. */
async function completeItem(
  client: Queryable,
  runId: string,
  sessionId: string,
  result: SessionResult,
): Promise<boolean> {
  // Only a pending item takes a result: this is what makes recording idempotent. A second writer
  // waits for the first one's row lock, then finds the item done and changes nothing.
  const updated = await client.query(
    `UPDATE run_items SET status = 'done', result = $3, gradable = $4, graded_at = $5
     WHERE run_id = $1 AND session_id = $2 AND status = 'pending' RETURNING 1`,
    [runId, sessionId, JSON.stringify(result), result.gradable, result.gradedAt],
  );
  return updated.length === 1;
}

async function findRun(client: Queryable, runId: string): Promise<RunRecord | undefined> {
  const [row] = await client.query<RunRow>(`${selectRuns} WHERE r.id = $1 GROUP BY r.id`, [runId]);
  return row ? toRun(row, jsonAsReturned) : undefined;
}

async function requireRun(client: Queryable, runId: string): Promise<RunRecord> {
  const run = await findRun(client, runId);
  if (!run) throw new Error(`There is no grading run ${runId}.`);
  return run;
}
