// The console websocket between the SPA and the BFF (GET /api/sessions/:id/console). Binary frames
// carry raw terminal bytes both ways; text frames carry the small JSON messages below.
import * as z from "zod/mini";
import { ReasonParams, Role } from "./api.ts";

/** `?mode=observe`: read-only. Staff must ask for it; the owner may, for a second read-only window. */
export const ConsoleQuery = z.object({ mode: z.optional(z.enum(["observe"])) });
export type ConsoleQuery = z.output<typeof ConsoleQuery>;

/** Where the BFF's own connection to the VM's console stands. */
export const UpstreamState = z.enum(["connecting", "connected", "reconnecting"]);
export type UpstreamState = z.output<typeof UpstreamState>;

/**
 * Why a fit failed: the VM's agent cannot be reached (an image without it, or a VM still starting
 * it), or it answered but could not set the terminal's size.
 */
export const GuestFitFailure = z.enum(["agent-unreachable", "tty-failed"]);
export type GuestFitFailure = z.output<typeof GuestFitFailure>;

/** One person with the console open: "type" while they hold the keyboard, else "observe". */
export const ConsoleViewerEntry = z.object({
  username: z.string(),
  role: Role,
  mode: z.enum(["observe", "type"]),
});
export type ConsoleViewerEntry = z.output<typeof ConsoleViewerEntry>;

/**
 * Why a replayed screen shows nothing, so the browser can say what to press (in its own language):
 * `quiet` the VM printed nothing the BFF could show (or only a prompt, which its log keeps back
 * until a newline follows); `log-off` its serial console log is off, so earlier output is gone;
 * `log-unreadable` the log could not be read.
 */
export const ScreenBlankReason = z.enum(["quiet", "log-off", "log-unreadable"]);
export type ScreenBlankReason = z.output<typeof ScreenBlankReason>;

/**
 * Why the console waits or ended, as the SPA's catalogs name it (console.notices.*), beside the
 * English sentence other clients read. `session_failed` names its session's notice in
 * `params.sessionNotice` (api.ts sessionNoticeReasons), beside that notice's own parameters.
 */
/** The serial console's number among a session's consoles; a lab's terminals are 1, 2, … */
export const serialConsole = 0;
/** The VM's screen's number among them (GET /api/sessions/:id/vnc, screen-protocol.ts). */
export const graphicalConsole = -1;

export const consoleNoticeReasons = [
  "waiting_for_start",
  "vm_shut_down",
  "waiting_for_console",
  "console_not_answering",
  "console_dropped",
  "start_timeout",
  "session_gone",
  "session_stopped",
  "session_failed",
  "cluster_refused_console",
  "signed_out",
  "sign_in_ended",
  "sign_in_expired",
  "too_many_windows",
  "reopened_too_often",
  "terminal_unreachable",
  "terminal_unproven",
  "terminal_agent_too_old",
  "too_many_terminals",
  "terminal_refused",
  "shell_exited",
  "terminal_dropped",
  "idle_warning",
  "idle_paused",
] as const;
export type ConsoleNoticeReason = (typeof consoleNoticeReasons)[number];

export const ConsoleNotice = z.object({ reason: z.string(), params: ReasonParams });
export type ConsoleNotice = z.output<typeof ConsoleNotice>;

/** `message` says in plain words (English) what the BFF is waiting for, e.g. the VM to start. */
export const StatusMessage = z.object({
  type: z.literal("status"),
  state: UpstreamState,
  message: z.nullable(z.string()),
  notice: z.optional(z.nullable(ConsoleNotice)),
});

/** Who types into the VM right now, and what this viewer may do about it. */
export const KeyboardMessage = z.object({
  type: z.literal("keyboard"),
  holder: z.string(),
  holderIsOwner: z.boolean(),
  canType: z.boolean(),
  canTake: z.boolean(),
  canRelease: z.boolean(),
});
export type KeyboardMessage = z.output<typeof KeyboardMessage>;

/**
 * Everyone with the console open, one entry per person (their windows together), sent on every
 * join, leave, take and release. Names and roles are the BFF's own records of the sign-ins.
 */
export const ViewersMessage = z.object({
  type: z.literal("viewers"),
  viewers: z.array(ConsoleViewerEntry),
  /** Who holds the keyboard (the owner unless staff took it), whether or not they are connected. */
  holder: z.string(),
});
export type ViewersMessage = z.output<typeof ViewersMessage>;

/** The console is over; the socket closes next and reconnecting will not help. */
export const EndedMessage = z.object({
  type: z.literal("ended"),
  reason: z.string(),
  notice: z.optional(ConsoleNotice),
});
export type EndedMessage = z.output<typeof EndedMessage>;

export const ConsoleServerMessage = z.discriminatedUnion("type", [
  StatusMessage,
  /**
   * The binary frames up to replay-end are the console's current screen and recent scrollback,
   * serialized. `fresh`: the BFF holds no earlier output for this console (first viewer, or the BFF
   * restarted), so a client may keep what it already shows instead of clearing it.
   */
  z.object({ type: z.literal("replay-begin"), fresh: z.boolean() }),
  /** `blank`: the replayed screen shows nothing, and why. */
  z.object({ type: z.literal("replay-end"), blank: z.optional(ScreenBlankReason) }),
  KeyboardMessage,
  /** The size the guest's console terminal was last given (through its agent), for the "fit" control. */
  z.object({ type: z.literal("guest-size"), cols: z.number(), rows: z.number() }),
  /** This viewer's fit could not be applied; nothing was typed into the guest. */
  z.object({
    type: z.literal("fit-failed"),
    code: GuestFitFailure,
    cols: z.number(),
    rows: z.number(),
  }),
  ViewersMessage,
  /**
   * Keys this viewer typed were not sent: the line to the VM is not up, and the keys typed meanwhile
   * (held, and sent once it is) fill what the BFF holds.
   */
  z.object({ type: z.literal("input-refused"), reason: z.literal("not_connected") }),
  EndedMessage,
]);
export type ConsoleServerMessage = z.output<typeof ConsoleServerMessage>;

export const guestSizeLimits = { minCols: 20, maxCols: 500, minRows: 5, maxRows: 200 } as const;

export const ConsoleClientMessage = z.discriminatedUnion("type", [
  /** Flow control: this many more bytes of binary frames were written into the terminal. */
  z.object({
    type: z.literal("ack"),
    bytes: z.number().check(z.int(), z.positive(), z.maximum(1 << 30)),
  }),
  z.object({ type: z.literal("take-keyboard") }),
  z.object({ type: z.literal("release-keyboard") }),
  /**
   * Sets the guest's console terminal to this size through the VM's agent (its programs get
   * SIGWINCH; nothing is typed) and sizes the BFF's copy of the screen to match.
   */
  z.object({
    type: z.literal("fit-guest"),
    cols: z.number().check(z.int(), z.minimum(guestSizeLimits.minCols), z.maximum(guestSizeLimits.maxCols)),
    rows: z.number().check(z.int(), z.minimum(guestSizeLimits.minRows), z.maximum(guestSizeLimits.maxRows)),
  }),
]);
export type ConsoleClientMessage = z.output<typeof ConsoleClientMessage>;

/**
 * A client acks once at least this many bytes were written since its last ack, and whenever it has
 * written all it received (else a paused console could wait forever on a remainder below this).
 */
export const consoleAckBytes = 32 * 1024;

/** The largest frame either side sends; the BFF refuses larger ones from browsers. */
export const consoleMaxFrameBytes = 64 * 1024;

/** Close codes besides the standard ones. A client reconnects after any close not preceded by "ended". */
export const consoleCloseCodes = {
  /** The viewer fell too far behind and was dropped; reconnecting gets it the current screen. */
  tooSlow: 4008,
} as const;
