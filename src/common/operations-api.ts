// The operations part of the JSON API between the SPA and the BFF: capacity, the doctor's
// report and the audit log. Extending a session answers with the Session of api.ts.
import * as z from "zod/mini";
import { Role } from "./api.ts";
import { DoctorText } from "./doctor-texts.ts";

/** How many more sessions of one lab the cluster has room for right now. */
export const LabCapacity = z.object({
  labId: z.string(),
  /** What one session's virt-launcher pod asks of a node. */
  request: z.object({ cpuMillis: z.number(), memoryBytes: z.number() }),
  /** More sessions that fit now, by resources alone (quotas not applied). */
  fits: z.number(),
});
export type LabCapacity = z.output<typeof LabCapacity>;

export const CapacityReport = z.object({
  checkedAt: z.string(),
  /** Nodes that can run VMs: Ready, schedulable, with KVM. */
  nodes: z.array(
    z.object({
      name: z.string(),
      allocatable: z.object({ cpuMillis: z.number(), memoryBytes: z.number() }),
      /** What Lab Console's own sessions hold (or will hold once scheduled) on it. */
      used: z.object({ cpuMillis: z.number(), memoryBytes: z.number() }),
    }),
  ),
  cpuAllocationRatio: z.number(),
  labs: z.array(LabCapacity),
});
export type CapacityReport = z.output<typeof CapacityReport>;

export const doctorStatuses = ["ok", "warn", "fail"] as const;
export const DoctorStatus = z.enum(doctorStatuses);
export type DoctorStatus = z.output<typeof DoctorStatus>;

export const DoctorCheck = z.object({
  id: z.string(),
  title: z.string(),
  status: DoctorStatus,
  /** One sentence: what was found. */
  summary: z.string(),
  /** Why it matters and what was looked at, one fact per entry. */
  details: z.array(z.string()),
  /** What to do about a warn or fail (commands included); null when nothing is to be done. */
  fix: z.nullable(z.string()),
  /**
   * The same title, summary, details and fix as sentences by key (doctor-texts.ts), for the SPA to say
   * in the reader's language; the fix one line each. The strings above are their English.
   */
  texts: z.object({
    title: DoctorText,
    summary: DoctorText,
    details: z.array(DoctorText),
    fix: z.array(DoctorText),
  }),
});
export type DoctorCheck = z.output<typeof DoctorCheck>;

export const DoctorReport = z.object({
  checkedAt: z.string(),
  /** The worst status of all checks. */
  status: DoctorStatus,
  checks: z.array(DoctorCheck),
});
export type DoctorReport = z.output<typeof DoctorReport>;

export const auditActions = [
  "sign-in",
  "sign-in-failed",
  "launch",
  "extend",
  "restart",
  "end",
  "console-attach",
  "console-detach",
  "take-keyboard",
  "self-check",
  "grading-run",
  "export",
  "raise-hand",
  "acknowledge-hand",
  "wall-open",
  "sign-out-user",
  "file-upload",
  "file-download",
  "class-schedule",
  "class-cancel",
  "announcement-send",
  "lti-roster-sync",
  "lti-score-retry",
  "idle-pause",
  "idle-resume",
  "lti-deep-link",
  "lti-platform-approve",
  "lti-platform-register",
] as const;
export const AuditAction = z.enum(auditActions);
export type AuditAction = z.output<typeof AuditAction>;

export const AuditEntry = z.object({
  id: z.number(),
  at: z.string(),
  /** Who did it: a username, or "system" for the console itself (the reaper). */
  actor: z.string(),
  /** The actor's role then; null for the system and for failed sign-ins. */
  actorRole: z.nullable(Role),
  action: AuditAction,
  sessionId: z.nullable(z.string()),
  labId: z.nullable(z.string()),
  /** The student whose session it was. */
  owner: z.nullable(z.string()),
  /** The session's section; null without one (and in entries from before sections). */
  section: z.nullable(z.string()),
  /** Action-specific facts, e.g. { minutes: 15 } for an extension or { reason: "expired" }. */
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  /** Where the request came from (the client address as the BFF sees it); null for the system. */
  ip: z.nullable(z.string()),
  userAgent: z.nullable(z.string()),
});
export type AuditEntry = z.output<typeof AuditEntry>;

export const AuditQuery = z.object({
  /** Entries where this person acted or whose session it was. */
  user: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  action: z.optional(AuditAction),
  session: z.optional(z.string().check(z.minLength(1), z.maxLength(63))),
  lab: z.optional(z.string().check(z.minLength(1), z.maxLength(40))),
  /** ISO 8601 bounds on `at`: since inclusive, until exclusive. */
  since: z.optional(z.iso.datetime({ offset: true })),
  until: z.optional(z.iso.datetime({ offset: true })),
  /** Only entries older than this id (the previous page's nextBefore). */
  before: z.optional(z.coerce.number().check(z.int(), z.positive())),
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(500)), 100),
});
export type AuditQuery = z.output<typeof AuditQuery>;

export const AuditPage = z.object({
  /** Newest first. */
  items: z.array(AuditEntry),
  /** Pass as `before` for the next (older) page; null when this was the last. */
  nextBefore: z.nullable(z.number()),
});
export type AuditPage = z.output<typeof AuditPage>;

/** An instructor ends every sign-in of one person made until now (POST /api/admin/sign-outs). */
export const SignOutUserRequest = z.object({
  username: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
});
export type SignOutUserRequest = z.output<typeof SignOutUserRequest>;

export const SignOutUserResult = z.object({
  username: z.string(),
  /** ISO 8601: their sign-ins made up to this moment no longer count, on every replica within 2 s. */
  signedInUpTo: z.string(),
  /** ISO 8601: when the last cookie it refuses would have expired anyway. */
  keptUntil: z.string(),
});
export type SignOutUserResult = z.output<typeof SignOutUserResult>;
