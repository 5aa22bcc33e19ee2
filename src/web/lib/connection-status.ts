// Where a shared console stands, as the serial console and the screen both show it: the BFF's hub
// says how its own line to the VM is (`status` messages), the browser adds its own lost connection,
// and who may type comes in `keyboard` messages. One shape, so one status line and one keyboard bar
// (components/) serve both.
import type { ConsoleNotice, UpstreamState } from "../../common/console-protocol.ts";

export type ConnectionStatus =
  /** Opening the socket, or the BFF is waiting for the VM (`message` says what for). */
  | { kind: "connecting"; message: string | null; notice?: ConsoleNotice }
  /** `notice`: something to know while connected, such as the idle warning. */
  | { kind: "connected"; notice?: ConsoleNotice; message?: string | null }
  /**
   * `retryAt`: when the browser reconnects its own socket (its connection to Lab Console was lost);
   * null while the BFF reconnects to the VM, with the BFF's `message`.
   */
  | { kind: "reconnecting"; message: string | null; retryAt: number | null; notice?: ConsoleNotice }
  | { kind: "ended"; reason: string; notice?: ConsoleNotice };

export interface KeyboardState {
  holder: string;
  holderIsOwner: boolean;
  canType: boolean;
  canTake: boolean;
  canRelease: boolean;
}

/** A `status` message of the BFF's as the page shows it. */
export function statusFromUpstream(
  state: UpstreamState,
  message: string | null,
  notice: ConsoleNotice | undefined,
): ConnectionStatus {
  const said = notice ? { notice } : {};
  if (state === "connected") return notice ? { kind: "connected", message, notice } : { kind: "connected" };
  if (state === "connecting") return { kind: "connecting", message, ...said };
  return { kind: "reconnecting", message, retryAt: null, ...said };
}
