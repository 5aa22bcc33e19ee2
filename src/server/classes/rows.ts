// The classes row as both stores read it, and the record it makes.
import { epochMsOf, type StoredTime } from "../db/column-values.ts";
import type { ClassRecord } from "./repository.ts";

export interface ClassRow {
  id: string;
  lab_id: string;
  starts_at: StoredTime;
  ends_at: StoredTime;
  expected: number;
  created_by: string;
  created_at: StoredTime;
}

export function toClass(row: ClassRow): ClassRecord {
  return {
    id: row.id,
    labId: row.lab_id,
    startsAt: epochMsOf(row.starts_at),
    endsAt: epochMsOf(row.ends_at),
    expected: row.expected,
    createdBy: row.created_by,
    createdAt: epochMsOf(row.created_at),
  };
}
