// The JSON API between the SPA and the BFF: one schema per body, shared by both sides.
import * as z from "zod/mini";
import { labConsoles } from "./lab.ts";
import { Translations } from "./translations.ts";

export const roles = ["student", "ta", "instructor"] as const;
export const Role = z.enum(roles);
export type Role = z.output<typeof Role>;

/**
 * A section's name: what a Kubernetes label value may hold (sessions carry it as one), lower case.
 * A course without sections has none at all.
 */
export const sectionPattern = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;
export const SectionName = z.string().check(z.regex(sectionPattern));

/**
 * `sections`: a student's section (the first, should they be in several); the sections a TA works
 * in, or none for a TA of the whole course. Instructors see every section whatever they list.
 * A sign-in from before sections existed carries none (a TA's no longer stands: server/auth/current-user.ts).
 */
export const Me = z.object({
  username: z.string(),
  role: Role,
  sections: z._default(z.array(z.string()), []),
});
export type Me = z.output<typeof Me>;

/**
 * GET /api/auth/session: who this browser is signed in as, `user: null` for nobody, always 200. The
 * SPA asks it on every first load, where a 401 from /api/me would be an error in the browser's console
 * before anyone could have signed in.
 */
export const SignInState = z.object({ user: z.nullable(Me) });
export type SignInState = z.output<typeof SignInState>;

export const LoginRequest = z.object({
  username: z.string().check(z.minLength(1), z.maxLength(64)),
  password: z.string().check(z.minLength(1), z.maxLength(256)),
});
export type LoginRequest = z.output<typeof LoginRequest>;

/** GET /api/auth/config (no sign-in needed): which sign-in the page shows. */
export const AuthConfig = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("demo") }),
  z.object({ mode: z.literal("oidc"), providerName: z.string() }),
]);
export type AuthConfig = z.output<typeof AuthConfig>;

/** GET /api/auth/oidc/login?returnTo=<path> starts a sign-in at the OpenID Connect provider. */
export const oidcSignInPath = "/api/auth/oidc/login";

/**
 * Why a sign-in ended back on the sign-in page: `/sign-in?error=<code>`. At the OIDC provider: the first
 * five. From an LMS (LTI 1.3): lti-refused, its launch could not be checked; lti-platform-pending, the LMS
 * registered itself and waits for an instructor's approval; lti-platform-unknown, no LMS with that issuer
 * is connected.
 */
export const signInErrors = [
  "cancelled",
  "no-role",
  "expired",
  "failed",
  "unavailable",
  "lti-refused",
  "lti-platform-pending",
  "lti-platform-unknown",
] as const;
export type SignInError = (typeof signInErrors)[number];

/** POST /api/auth/logout answers 204, or 200 with this when the provider's session should end too. */
export const LogoutResult = z.object({ providerSignOutUrl: z.string() });
export type LogoutResult = z.output<typeof LogoutResult>;

/**
 * What a person sees of a lab: the lab file without the check commands. Texts are plain (English),
 * with `translations` for the languages the lab file gives; the SPA falls back to the plain text.
 */
export const LabSummary = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  vm: z.object({ cpu: z.number(), memory: z.string(), nested: z.boolean() }),
  session: z.object({
    minutes: z.number(),
    extendMinutes: z.number(),
    maxExtensions: z.number(),
    terminals: z.number(),
    /** The consoles a session shows, a tab each, in the lab's order. */
    consoles: z.array(z.enum(labConsoles)),
    /** The lab's idle limit; absent when it has none. */
    idle: z.optional(
      z.object({ minutes: z.number(), warnMinutes: z.number(), action: z.enum(["end", "pause"]) }),
    ),
  }),
  checks: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      points: z.number(),
      selfCheck: z.boolean(),
      translations: z.optional(z.object({ title: z.optional(Translations) })),
    }),
  ),
  translations: z.optional(
    z.object({ title: z.optional(Translations), description: z.optional(Translations) }),
  ),
});
export type LabSummary = z.output<typeof LabSummary>;

export const sessionStatuses = ["starting", "running", "stopping", "failed"] as const;
export const SessionStatus = z.enum(sessionStatuses);
export type SessionStatus = z.output<typeof SessionStatus>;

/** VMI phases as KubeVirt names them; "" until the VMI exists. */
export const TimelineEntry = z.object({ phase: z.string(), at: z.string() });
export type TimelineEntry = z.output<typeof TimelineEntry>;

/** A student's raised hand ("Ask for help"), until a TA acknowledges it. */
export const HelpRequest = z.object({
  raisedAt: z.string(),
  note: z.string(),
  /** The TA or instructor who answered it; null while it waits. */
  acknowledgedBy: z.nullable(z.string()),
});
export type HelpRequest = z.output<typeof HelpRequest>;

export const RaiseHandRequest = z.object({ note: z._default(z.string().check(z.maxLength(500)), "") });
export type RaiseHandRequest = z.output<typeof RaiseHandRequest>;

/**
 * Why a session needs attention, as the SPA's catalogs name it (sessions.notices.*). A reason this
 * SPA does not know yet (a newer BFF) falls back to the English `message`.
 */
export const sessionNoticeReasons = [
  "restarting",
  "start_retrying",
  "start_failing",
  "paused",
  "node_unresponsive",
  "stopped_unexpectedly",
  "stopped_because",
  "node_unresponsive_restarting",
  "stopped_unexpectedly_restarting",
  "stopped_because_restarting",
  "no_room_for_vm",
  "no_kvm_node",
  "no_node_ready",
  "cannot_schedule",
  "image_not_pulled",
  "image_not_pulled_retrying",
  "disk_missing",
  "disk_not_prepared",
  "node_lost",
  "stopped_outside",
] as const;
export type SessionNoticeReason = (typeof sessionNoticeReasons)[number];

/** The parameters of a reason's sentence (error-reasons.ts ErrorParams), as any reason carries them. */
export const ReasonParams = z.record(z.string(), z.union([z.string(), z.number()]));

export const SessionNotice = z.object({ reason: z.string(), params: ReasonParams });
export type SessionNotice = z.output<typeof SessionNotice>;

export const SessionIdle = z.object({
  state: z.enum(["warning", "paused"]),
  action: z.enum(["end", "pause"]),
  /** When the action comes (warning), or when the VM was paused (paused). */
  endsAt: z.string(),
});
export type SessionIdle = z.output<typeof SessionIdle>;

export const Session = z.object({
  id: z.string(),
  labId: z.string(),
  owner: z.string(),
  /** The owner's section when the session started, or null in a course without sections. */
  section: z.nullable(z.string()),
  status: SessionStatus,
  /** The VMI phase, or "" while there is no VMI yet. */
  phase: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  extensions: z.number(),
  timeline: z.array(TimelineEntry),
  /** A plain-words reason when something is wrong, else null: English, for API clients. */
  message: z.nullable(z.string()),
  /** The same as a code and its parameters, which the SPA says in the reader's language. */
  notice: z.nullable(SessionNotice),
  /** The raised hand, absent when there is none. */
  help: z.optional(HelpRequest),
  /** "warm": a VM of a scheduled class's pool, booted before the launch and claimed by it. */
  start: z.enum(["warm", "cold"]),
  /**
   * Idle handling, absent while the session is not idle-warned or paused: `warning` until `endsAt`,
   * when the session ends or its VM pauses (`action`); `paused` once the idle limit paused it
   * (POST /api/sessions/:id/resume resumes it).
   */
  idle: z.optional(SessionIdle),
});
export type Session = z.output<typeof Session>;

/**
 * GET /api/past-sessions: the signed-in person's own sessions that have ended, newest first, each with
 * its last self-check. Read from the audit log's launches, so kept as long as it keeps them.
 */
export const PastSession = z.object({
  id: z.string(),
  labId: z.string(),
  startedAt: z.string(),
  /** When it ended (the audit log's "end"); null when the console did not end it (deleted in the cluster). */
  endedAt: z.nullable(z.string()),
  /** The last "Check my work"; null when there was none. A score of null: the VM could not be checked. */
  lastSelfCheck: z.nullable(
    z.object({ checkedAt: z.string(), score: z.nullable(z.number()), maxScore: z.number() }),
  ),
});
export type PastSession = z.output<typeof PastSession>;
export const PastSessionList = z.object({ items: z.array(PastSession) });
export type PastSessionList = z.output<typeof PastSessionList>;

export const CreateSessionRequest = z.object({ labId: z.string().check(z.minLength(1), z.maxLength(40)) });
export type CreateSessionRequest = z.output<typeof CreateSessionRequest>;

export const SessionListQuery = z.object({
  lab: z.optional(z.string()),
  status: z.optional(SessionStatus),
  owner: z.optional(z.string()),
  page: z._default(z.coerce.number().check(z.int(), z.minimum(1)), 1),
  pageSize: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1000)), 100),
});
export type SessionListQuery = z.output<typeof SessionListQuery>;

export const SessionList = z.object({
  items: z.array(Session),
  total: z.number(),
  page: z.number(),
  pageSize: z.number(),
  /** Counts by status over the filtered set, before paging. */
  counts: z.record(SessionStatus, z.number()),
  /** True while the BFF's cluster cache is not in sync (serving its last view). */
  stale: z.boolean(),
});
export type SessionList = z.output<typeof SessionList>;

/**
 * GET /api/sessions/:id/boot-log: the VM's serial console log so far (complete lines; empty before the
 * VMI). `logging: "off"` when KubeVirt keeps no serial console log for this VM (its launcher pod has
 * no guest-console-log container): there is no boot log, though the live console works.
 */
export const BootLog = z.object({ lines: z.array(z.string()), logging: z.enum(["on", "off"]) });
export type BootLog = z.output<typeof BootLog>;

/** A console recording (asciicast v2); it outlives its session until the retention period ends. */
/**
 * Where a console's recording is kept, and the name its file downloads as: the session's id for its
 * serial console, and for a terminal or the screen (console -1, console-protocol.ts) an id no
 * session can have (a session's ends in eight letters and digits).
 */
export function recordingIdOf(sessionId: string, terminal: number): string {
  if (terminal === 0) return sessionId;
  return terminal === -1 ? `${sessionId}--screen` : `${sessionId}--terminal-${terminal}`;
}

export const RecordingSummary = z.object({
  sessionId: z.string(),
  /**
   * A lab's terminal (1, 2, …), or -1 for the VM's screen (a screen recording, docs/vnc.md); absent
   * for the serial console's recording.
   */
  terminal: z.optional(z.number()),
  owner: z.string(),
  labId: z.string(),
  startedAt: z.string(),
  lastWrittenAt: z.string(),
  bytes: z.number(),
});
export type RecordingSummary = z.output<typeof RecordingSummary>;

export const RecordingListQuery = z.object({
  lab: z.optional(z.string().check(z.maxLength(40))),
  /** Staff only: one student's recordings (exact username). A student always gets only their own. */
  student: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
});
export const RecordingList = z.object({ items: z.array(RecordingSummary) });
export type RecordingList = z.output<typeof RecordingList>;

/**
 * Every error the API returns has this shape. `code` is stable and machine-readable; `reason` and
 * `params`, when present, say which refusal it is (common/error-reasons.ts); `message` is English.
 */
export const ApiErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    reason: z.optional(z.string()),
    params: z.optional(ReasonParams),
  }),
});
export type ApiErrorBody = z.output<typeof ApiErrorBody>;

/** Mutations must carry this header: a cross-site form cannot set it. */
export const csrfHeader = { name: "X-Lab-Console", value: "1" } as const;
