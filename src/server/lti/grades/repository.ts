// Where the grades side of LTI keeps what outlives a launch: the courses people launched from, who is
// linked to which lab in which course, the line item of each (course, lab), the outbox of scores on
// their way to the gradebooks, and each course's roster. Async throughout so that a PostgreSQL
// implementation fits the same interface; testing/repository-contract.ts holds what every
// implementation must do. Times are ISO 8601 strings in UTC (toISOString()).
import type { Role } from "../../../common/api.ts";

export interface CourseRecord {
  /** courseId(platformId, contextId): stable, URL-safe, the same on every replica. */
  id: string;
  platformId: string;
  contextId: string;
  title: string | null;
  /** NRPS context_memberships_url, as the last launch that offered it gave it. */
  membershipsUrl: string | null;
  /** AGS lineitems, as the last launch that offered it gave it. */
  lineItemsUrl: string | null;
  rosterSyncedAt: string | null;
}

/** What a launch says of a course: what it leaves out (null) keeps what an earlier launch said. */
export type CourseUpdate = Omit<CourseRecord, "rosterSyncedAt">;

/** A person linked to a lab from a course: where their scores for it go. */
export interface LinkRecord {
  courseId: string;
  labId: string;
  username: string;
  /** Their id at the platform (`sub`): the userId of every score sent for them. */
  userId: string;
  resourceLinkId: string;
  /** The link asks for self-checks too, not only grading runs. */
  postSelfChecks: boolean;
  updatedAt: string;
}

export interface LineItemRecord {
  courseId: string;
  labId: string;
  url: string;
}

export const scoreSources = ["run", "self-check"] as const;
export type ScoreSource = (typeof scoreSources)[number];
/**
 * superseded: a score that outranks it, for the same person, lab and course, made it moot before it
 * was sent. A grading run's score outranks every self-check (the run is the instructor's grade, and a
 * self-check taken after it must not replace it in the gradebook); among scores of one source, the
 * later graded outranks the earlier.
 */
export const outboxStates = ["pending", "posted", "refused", "superseded"] as const;
export type OutboxState = (typeof outboxStates)[number];

export interface NewScore {
  id: string;
  courseId: string;
  labId: string;
  username: string;
  userId: string;
  source: ScoreSource;
  /** `runId:sessionId` for a run's result, the self-check's id for a self-check. */
  sourceId: string;
  scoreGiven: number;
  scoreMaximum: number;
  /** The result's time: the Score's timestamp, the same on every attempt. */
  gradedAt: string;
  createdAt: string;
}

export interface ScoreRecord extends NewScore {
  state: OutboxState;
  attempts: number;
  /** When a pending score is next tried; null once it is no longer pending. */
  nextAttemptAt: string | null;
  /** The LMS's own words when it refused, or why the last attempt failed. */
  lastError: string | null;
  postedAt: string | null;
}

export interface ScoreFilter {
  labId?: string;
  states: readonly OutboxState[];
}

export interface RosterMemberRecord {
  userId: string;
  username: string | null;
  name: string | null;
  email: string | null;
  role: Role | null;
  sections: string[];
  status: "Active" | "Inactive" | "Deleted";
}

export interface LtiGradesRepository {
  /** Adds the course, or updates what the launch says of it. */
  saveCourse(course: CourseUpdate): Promise<void>;
  getCourse(id: string): Promise<CourseRecord | undefined>;
  /** Every course with the number of its roster members, most recently synced first. */
  listCourses(): Promise<(CourseRecord & { members: number })[]>;

  /** Adds the link, or updates it: one per (course, lab, username). */
  saveLink(link: LinkRecord): Promise<void>;
  /** The person's links to the lab, one per course. */
  linksOf(username: string, labId: string): Promise<LinkRecord[]>;
  /** The labs anyone is linked to. */
  linkedLabs(): Promise<string[]>;

  lineItem(courseId: string, labId: string): Promise<string | undefined>;
  /**
   * Sets the (course, lab)'s line item unless it has one: the first stays, so two links to the lab in
   * one course, each naming its own column, do not take turns. Returns the one stored afterwards.
   */
  addLineItem(item: LineItemRecord): Promise<string>;
  /** Forgets the (course, lab)'s line item if it is still `item.url` (the LMS no longer has it). */
  forgetLineItem(item: LineItemRecord): Promise<void>;

  /**
   * Adds the score, pending and due at once, unless (course, source, sourceId) is already in the
   * outbox: then nothing changes and `enqueued` is false. A score added supersedes the pending scores
   * of the same (course, lab, username) it outranks, and is itself superseded when one that outranks
   * it is there already (see OutboxState).
   */
  enqueueScore(score: NewScore): Promise<{ score: ScoreRecord; enqueued: boolean }>;
  getScore(id: string): Promise<ScoreRecord | undefined>;
  /** Pending scores due at `now`, oldest first (by when they were added). */
  dueScores(now: string, limit: number): Promise<ScoreRecord[]>;
  /** Newest first. */
  listScores(filter: ScoreFilter, limit: number): Promise<ScoreRecord[]>;
  countScores(filter: Omit<ScoreFilter, "states">): Promise<Record<OutboxState, number>>;
  /** The LMS took it. Recorded whatever its state meanwhile: it is in the gradebook. */
  markPosted(id: string, at: string): Promise<void>;
  /** A failed attempt to try again at `nextAttemptAt`; only a pending score changes. */
  markRetry(id: string, failure: { error: string; nextAttemptAt: string }): Promise<void>;
  /** The LMS refused it for a reason another try will not change; only a pending score changes. */
  markRefused(id: string, failure: { error: string }): Promise<void>;
  /**
   * A refused or pending score back to pending, due at `now`, superseding the pending scores it
   * outranks; any other is left as it is. A refused or pending score outranked by a pending or posted
   * one is superseded instead: sent now, it would be refused as older (Canvas) or roll the grade back.
   * Returns the score as it is afterwards.
   */
  retryScore(id: string, now: string): Promise<ScoreRecord | undefined>;

  /** Replaces the course's roster whole and records when. */
  replaceRoster(courseId: string, members: RosterMemberRecord[], syncedAt: string): Promise<void>;
  /** Active and inactive members alike, by name then user id. */
  roster(courseId: string): Promise<RosterMemberRecord[]>;
  /** The member's sections; [] for a member not in the roster. */
  sectionsOf(courseId: string, userId: string): Promise<string[]>;

  close(): Promise<void>;
}
