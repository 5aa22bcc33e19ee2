// The operations part of the JSON API between the SPA and the BFF (issue 7): capacity, the doctor's
// report and the audit log. Extending a session answers with the Session of api.ts.
import { z } from "zod";
import { Role } from "./api.ts";

/** How many more sessions of one lab the cluster has room for right now. */
export const LabCapacity = z.object({
  labId: z.string(),
  /** What one session's virt-launcher pod asks of a node. */
  request: z.object({ cpuMillis: z.number(), memoryBytes: z.number() }),
  /** More sessions that fit now, by resources alone (quotas not applied). */
  fits: z.number(),
});
export type LabCapacity = z.infer<typeof LabCapacity>;

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
export type CapacityReport = z.infer<typeof CapacityReport>;

export const doctorStatuses = ["ok", "warn", "fail"] as const;
export const DoctorStatus = z.enum(doctorStatuses);
export type DoctorStatus = z.infer<typeof DoctorStatus>;

export const DoctorCheck = z.object({
  id: z.string(),
  title: z.string(),
  status: DoctorStatus,
  /** One sentence: what was found. */
  summary: z.string(),
  /** Why it matters and what was looked at, one fact per entry. */
  details: z.array(z.string()),
  /** What to do about a warn or fail (commands included); null when nothing is to be done. */
  fix: z.string().nullable(),
});
export type DoctorCheck = z.infer<typeof DoctorCheck>;

export const DoctorReport = z.object({
  checkedAt: z.string(),
  /** The worst status of all checks. */
  status: DoctorStatus,
  checks: z.array(DoctorCheck),
});
export type DoctorReport = z.infer<typeof DoctorReport>;

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
] as const;
export const AuditAction = z.enum(auditActions);
export type AuditAction = z.infer<typeof AuditAction>;

export const AuditEntry = z.object({
  id: z.number(),
  at: z.string(),
  /** Who did it: a username, or "system" for the console itself (the reaper). */
  actor: z.string(),
  /** The actor's role then; null for the system and for failed sign-ins. */
  actorRole: Role.nullable(),
  action: AuditAction,
  sessionId: z.string().nullable(),
  labId: z.string().nullable(),
  /** The student whose session it was. */
  owner: z.string().nullable(),
  /** Action-specific facts, e.g. { minutes: 15 } for an extension or { reason: "expired" }. */
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  /** Where the request came from (the client address as the BFF sees it); null for the system. */
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditQuery = z.object({
  /** Entries where this person acted or whose session it was. */
  user: z.string().min(1).max(200).optional(),
  action: AuditAction.optional(),
  session: z.string().min(1).max(63).optional(),
  lab: z.string().min(1).max(40).optional(),
  /** ISO 8601 bounds on `at`: since inclusive, until exclusive. */
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  /** Only entries older than this id (the previous page's nextBefore). */
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditPage = z.object({
  /** Newest first. */
  items: z.array(AuditEntry),
  /** Pass as `before` for the next (older) page; null when this was the last. */
  nextBefore: z.number().nullable(),
});
export type AuditPage = z.infer<typeof AuditPage>;

/** An instructor ends every sign-in of one person made until now (POST /api/admin/sign-outs). */
export const SignOutUserRequest = z.object({ username: z.string().trim().min(1).max(200) });
export type SignOutUserRequest = z.infer<typeof SignOutUserRequest>;

export const SignOutUserResult = z.object({
  username: z.string(),
  /** ISO 8601: their sign-ins made up to this moment no longer count, on every replica within 2 s. */
  signedInUpTo: z.string(),
  /** ISO 8601: when the last cookie it refuses would have expired anyway. */
  keptUntil: z.string(),
});
export type SignOutUserResult = z.infer<typeof SignOutUserResult>;
