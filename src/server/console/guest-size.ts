// Sets the size of a guest's console terminal through the VM's agent (POST /v1/tty, docs/agent.md):
// the agent's TIOCSWINSZ on the guest's serial terminal makes the kernel send SIGWINCH to whatever
// runs in the foreground there (vim, a Python prompt, a running program), which a serial line itself
// cannot carry. Nothing is typed into the console, so nothing can land as the student's input.
import type { GuestFitFailure } from "../../common/console-protocol.ts";
import { type AgentClient } from "../agent/client.ts";
import { AgentRefusedError, AgentUnreachableError } from "../agent/errors.ts";

export interface GuestSize {
  cols: number;
  rows: number;
}

export type GuestSizeOutcome = { ok: true } | { ok: false; failure: GuestFitFailure; reason: string };

/**
 * Never rejects: every way it fails is an outcome the console tells the viewer who asked.
 * `timeoutMs` bounds the whole call: the port-forward's retries while an agent starts and the agent
 * client's own connect timeout are longer than a person waits for a window to fit.
 */
export type SetGuestSize = (
  sessionId: string,
  size: GuestSize,
  options: { signal: AbortSignal; timeoutMs: number },
) => Promise<GuestSizeOutcome>;

export function guestSizeThroughAgent(agents: Pick<AgentClient, "setTtySize">): SetGuestSize {
  return async (sessionId, size, { signal, timeoutMs }) => {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    try {
      await agents.setTtySize(sessionId, size, deadline);
      return { ok: true };
    } catch (error) {
      if (error instanceof AgentRefusedError && error.agentCode === "tty_failed") {
        return { ok: false, failure: "tty-failed", reason: error.message };
      }
      const reason =
        error instanceof AgentUnreachableError
          ? error.message
          : deadline.aborted && !signal.aborted
            ? `The VM's agent did not answer within ${timeoutMs / 1000} s.`
            : String(error);
      return { ok: false, failure: "agent-unreachable", reason };
    }
  };
}
