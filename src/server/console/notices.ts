// What a console says to its viewers while it waits or when it ends: a reason the SPA says in the
// reader's language (console.notices.*) with its parameters, and the English sentence other clients
// read.
import type { Session } from "../../common/api.ts";
import type {
  ConsoleNotice,
  ConsoleNoticeReason,
  ConsoleServerMessage,
} from "../../common/console-protocol.ts";
import type { ErrorParams } from "../../common/error-reasons.ts";

export interface Notice {
  reason: ConsoleNoticeReason;
  params: ErrorParams;
  /** English, for clients other than the SPA (and the logs). */
  message: string;
}

function notice(reason: ConsoleNoticeReason, message: string, params: ErrorParams = {}): Notice {
  return { reason, params, message };
}

export const notices = {
  waitingForStart: notice("waiting_for_start", "Waiting for the VM to start…"),
  vmShutDown: notice("vm_shut_down", "The VM shut down; waiting for it to start again…"),
  waitingForConsole: notice("waiting_for_console", "Waiting for the VM's console…"),
  consoleNotAnswering: notice("console_not_answering", "The VM's console is not answering; retrying…"),
  consoleDropped: notice("console_dropped", "The connection to the VM's console dropped; reconnecting…"),
  startTimeout: (minutes: number) =>
    notice("start_timeout", `The VM did not start within ${minutes} minute${minutes === 1 ? "" : "s"}.`, {
      count: minutes,
    }),
  sessionGone: notice("session_gone", "This session has ended: its VM no longer exists."),
  sessionStopped: notice("session_stopped", "This session has ended: its VM was stopped."),
  sessionFailed: (session: Session): Notice =>
    notice(
      "session_failed",
      `${session.message ?? "The VM failed"}.`,
      session.notice ? { ...session.notice.params, sessionNotice: session.notice.reason } : {},
    ),
  clusterRefusedConsole: notice(
    "cluster_refused_console",
    "The cluster refused to open this console. An operator must check Lab Console's permissions.",
  ),
  signedOut: notice("signed_out", "You signed out. Sign in again to reopen the console."),
  signInEnded: notice("sign_in_ended", "Your sign-in ended. Sign in again to reopen the console."),
  signInExpired: notice("sign_in_expired", "Your sign-in has expired. Sign in again to reopen the console."),
  tooManyWindows: notice(
    "too_many_windows",
    "This console is open in too many of your windows. Close one, then reload this page.",
  ),
  terminalUnreachable: (why: string) =>
    notice(
      "terminal_unreachable",
      `The VM's agent, which opens terminals, cannot be reached yet (${why}); retrying…`,
    ),
  terminalUnproven: notice(
    "terminal_unproven",
    "The terminal's answer was not signed with this session's key, so it was closed.",
  ),
  terminalAgentTooOld: notice(
    "terminal_agent_too_old",
    "This VM's agent is too old to open terminals. Only VMs launched from now on have it: end this session and start a new one.",
  ),
  tooManyTerminals: notice(
    "too_many_terminals",
    "This VM has as many terminals open as its agent allows; trying again when one closes…",
  ),
  terminalDropped: notice(
    "terminal_dropped",
    "The connection to this terminal dropped, and its shell ended with it. Open the terminal again for a new one.",
  ),
  terminalRefused: (why: string) => notice("terminal_refused", `The VM's agent refused the terminal: ${why}`),
  /** `how`: the exit code, or the signal that ended it. */
  shellExited: (how: string) =>
    notice(
      "shell_exited",
      `The shell ended (${/^\d+$/.test(how) ? `exit code ${how}` : how}). Open the terminal again for a new one.`,
      { how },
    ),
  /** The session is idle: at `endsAt` (ISO 8601) it ends, or its VM pauses; a key resets it. */
  idleWarning: (endsAt: string, action: "end" | "pause") =>
    notice(
      "idle_warning",
      action === "pause"
        ? `No activity for a while: this VM will be paused at ${endsAt} unless you type something.`
        : `No activity for a while: this session will end at ${endsAt} unless you type something.`,
      { endsAt, action },
    ),
  idlePaused: notice("idle_paused", "This VM was paused after a time without activity. Resume it to go on."),
  reopenedTooOften: (seconds: number) =>
    notice("reopened_too_often", `This console was reopened too often. Reload this page in ${seconds} s.`, {
      seconds,
    }),
};

/** The wire form of a notice: the SPA's part. */
export function wireNotice({ reason, params }: Notice): ConsoleNotice {
  return { reason, params };
}

export function endedMessage(notice: Notice): ConsoleServerMessage {
  return { type: "ended", reason: notice.message, notice: wireNotice(notice) };
}
