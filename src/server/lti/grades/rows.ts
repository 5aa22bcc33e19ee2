// Rows of the LTI grades tables as both stores read them, and the records they make. SQLite gives
// times as the ISO text it stores and booleans as 0 or 1; PostgreSQL gives Dates and booleans.
import type { Role } from "../../../common/api.ts";
import { isoOf, isoOrNullOf, type StoredTime } from "../../db/column-values.ts";
import type {
  CourseRecord,
  LinkRecord,
  OutboxState,
  RosterMemberRecord,
  ScoreRecord,
  ScoreSource,
} from "./repository.ts";

export interface CourseRow {
  id: string;
  platform_id: string;
  context_id: string;
  title: string | null;
  memberships_url: string | null;
  lineitems_url: string | null;
  roster_synced_at: StoredTime | null;
}

export interface LinkRow {
  course_id: string;
  lab_id: string;
  username: string;
  user_id: string;
  resource_link_id: string;
  post_self_checks: number | boolean;
  updated_at: StoredTime;
}

export interface ScoreRow {
  id: string;
  course_id: string;
  lab_id: string;
  username: string;
  user_id: string;
  source: ScoreSource;
  source_id: string;
  score_given: number;
  score_maximum: number;
  graded_at: StoredTime;
  state: OutboxState;
  attempts: number;
  next_attempt_at: StoredTime | null;
  last_error: string | null;
  posted_at: StoredTime | null;
  created_at: StoredTime;
}

export interface RosterMemberRow {
  user_id: string;
  username: string | null;
  name: string | null;
  email: string | null;
  role: Role | null;
  /** A JSON array in SQLite, a text[] in PostgreSQL. */
  sections: string | string[];
  status: RosterMemberRecord["status"];
}

export function toCourse(row: CourseRow): CourseRecord {
  return {
    id: row.id,
    platformId: row.platform_id,
    contextId: row.context_id,
    title: row.title,
    membershipsUrl: row.memberships_url,
    lineItemsUrl: row.lineitems_url,
    rosterSyncedAt: isoOrNullOf(row.roster_synced_at),
  };
}

export function toLink(row: LinkRow): LinkRecord {
  return {
    courseId: row.course_id,
    labId: row.lab_id,
    username: row.username,
    userId: row.user_id,
    resourceLinkId: row.resource_link_id,
    postSelfChecks: row.post_self_checks === true || row.post_self_checks === 1,
    updatedAt: isoOf(row.updated_at),
  };
}

export function toScore(row: ScoreRow): ScoreRecord {
  return {
    id: row.id,
    courseId: row.course_id,
    labId: row.lab_id,
    username: row.username,
    userId: row.user_id,
    source: row.source,
    sourceId: row.source_id,
    scoreGiven: Number(row.score_given),
    scoreMaximum: Number(row.score_maximum),
    gradedAt: isoOf(row.graded_at),
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: isoOrNullOf(row.next_attempt_at),
    lastError: row.last_error,
    postedAt: isoOrNullOf(row.posted_at),
    createdAt: isoOf(row.created_at),
  };
}

export function toRosterMember(row: RosterMemberRow): RosterMemberRecord {
  return {
    userId: row.user_id,
    username: row.username,
    name: row.name,
    email: row.email,
    role: row.role,
    sections: toSections(row.sections),
    status: row.status,
  };
}

export const toSections = (sections: RosterMemberRow["sections"]): string[] =>
  typeof sections === "string" ? (JSON.parse(sections) as string[]) : sections;

export const noScores = (): Record<OutboxState, number> => ({
  pending: 0,
  posted: 0,
  refused: 0,
  superseded: 0,
});
