// Rows of the grading tables as both stores read them, and the records they make. The JSON columns
// (results, a run's selected sessions) arrive as text from SQLite and as values from pg: each store
// passes its JsonColumnReader.
import type { GradingRunStatus } from "../../common/grading-api.ts";
import { SessionResult } from "../../common/grading.ts";
import {
  isoOf,
  isoOrNullOf,
  type JsonColumnReader,
  type StoredInteger,
  type StoredTime,
} from "../db/column-values.ts";
import type { LatestResult, RunItemRecord, RunRecord, SelfCheckRecord } from "./repository.ts";

export interface SelfCheckRow {
  id: StoredInteger;
  session_id: string;
  lab_id: string;
  owner: string;
  checked_at: StoredTime;
  result: unknown;
}

/** A run with its items counted (both stores' queries count as integers). */
export interface RunRow {
  id: string;
  lab_id: string;
  started_by: string;
  status: GradingRunStatus;
  created_at: StoredTime;
  finished_at: StoredTime | null;
  /** A JSON array in SQLite, a text[] in PostgreSQL; null when the run grades every session. */
  selected_session_ids: unknown;
  rerun_of: string | null;
  total: number;
  done: number;
  ungradable: number;
}

export interface ItemRow {
  run_id: string;
  session_id: string;
  owner: string;
  section: string | null;
  status: "pending" | "done";
  result: unknown;
}

export interface LatestResultRow {
  run_id: string;
  section: string | null;
  result: unknown;
}

export function toSelfCheck(row: SelfCheckRow, json: JsonColumnReader): SelfCheckRecord {
  return {
    id: Number(row.id),
    sessionId: row.session_id,
    labId: row.lab_id,
    owner: row.owner,
    checkedAt: isoOf(row.checked_at),
    result: parseResult(json(row.result)),
  };
}

export function toRun(row: RunRow, json: JsonColumnReader): RunRecord {
  return {
    id: row.id,
    labId: row.lab_id,
    startedBy: row.started_by,
    status: row.status,
    createdAt: isoOf(row.created_at),
    finishedAt: isoOrNullOf(row.finished_at),
    selectedSessionIds:
      row.selected_session_ids === null ? null : (json(row.selected_session_ids) as string[]),
    rerunOf: row.rerun_of,
    counts: { total: row.total, done: row.done, ungradable: row.ungradable },
  };
}

export function toItem(row: ItemRow, json: JsonColumnReader): RunItemRecord {
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    owner: row.owner,
    section: row.section,
    status: row.status,
    result: row.result === null ? null : parseResult(json(row.result)),
  };
}

export function toLatestResult(row: LatestResultRow, json: JsonColumnReader): LatestResult {
  return { runId: row.run_id, section: row.section, result: parseResult(json(row.result)) };
}

/** Stored by this code, but checked anyway: a hand-edited or damaged row must not reach a page unseen. */
function parseResult(value: unknown): SessionResult {
  return SessionResult.parse(value);
}
