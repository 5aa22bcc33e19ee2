// What the hub needs of a lab's terminal (terminals/agent-terminal.ts opens them through the VM's
// agent): a line with a window size of its own, so a fit is said on the line and nothing is typed.
import type { GuestSize, SetGuestSize } from "./guest-size.ts";
import type { OpenUpstream } from "./upstream-connector.ts";
import type { UpstreamLine } from "./upstream.ts";

/** A terminal's line, with the window size its PTY has. */
export interface TerminalLine extends UpstreamLine {
  resize(size: GuestSize): void;
}

/** Opens a new shell in the session's VM, its PTY `size` big. Rejects with UpstreamRefusedError. */
export type OpenTerminal = (sessionId: string, size: GuestSize, signal: AbortSignal) => Promise<TerminalLine>;

/**
 * A terminal's connection and the size its next one opens with: a fit sets the open PTY's size
 * and is remembered for a shell opened later.
 */
export function terminalUpstream(
  open: OpenTerminal,
  initial: GuestSize,
): { connect: OpenUpstream; setGuestSize: SetGuestSize } {
  let size = initial;
  let current: TerminalLine | undefined;
  return {
    connect: async (sessionId, signal) => {
      current = await open(sessionId, size, signal);
      return current;
    },
    setGuestSize: async (_sessionId, next) => {
      size = next;
      current?.resize(next);
      return { ok: true };
    },
  };
}
