import type { ConsoleStatus } from "../lib/console-connection.ts";
import type { ConsoleTerminal, ConsoleTerminalState } from "../lib/console-terminal.ts";

const statusLabels: Record<ConsoleStatus["kind"], string> = {
  connecting: "Connecting…",
  connected: "Connected",
  reconnecting: "Reconnecting…",
  ended: "Ended",
};

export function ConsoleToolbar({
  terminal,
  state,
  observe,
}: {
  terminal: ConsoleTerminal;
  state: ConsoleTerminalState;
  /** Staff (or the owner's read-only window); otherwise the owner. */
  observe: boolean;
}) {
  const { status, keyboard, guestSize } = state;
  const detail =
    status.kind === "ended" ? status.reason : status.kind === "connected" ? null : status.message;
  const canFit = status.kind === "connected" && keyboard?.canType === true;

  return (
    <div className="console-toolbar">
      <p className="console-status" role="status" data-status={status.kind}>
        <span className="console-status-label">{statusLabels[status.kind]}</span>
        {detail && <span className="console-status-detail">{detail}</span>}
        {status.kind === "reconnecting" && status.retryAt !== null && (
          <button type="button" className="button button-quiet" onClick={() => terminal.reconnectNow()}>
            Reconnect now
          </button>
        )}
      </p>

      {keyboard && status.kind !== "ended" && (
        <p className="console-keyboard" aria-live="polite">
          <span>{keyboardText(keyboard)}</span>
          {keyboard.canTake && (
            <button type="button" className="button button-quiet" onClick={() => terminal.takeKeyboard()}>
              {observe ? "Take the keyboard" : "Take it back"}
            </button>
          )}
          {keyboard.canRelease && (
            <button type="button" className="button button-quiet" onClick={() => terminal.releaseKeyboard()}>
              Give it back
            </button>
          )}
        </p>
      )}

      <div className="console-actions">
        <button
          type="button"
          className="button button-quiet"
          disabled={!canFit}
          onClick={() => terminal.fitGuest()}
          title="Types “stty rows R cols C” at the prompt, so programs in the VM use this window's size"
        >
          Fit the guest to this window
        </button>
        {guestSize && (
          <span className="muted small" aria-label="Guest size">
            {guestSize.cols}×{guestSize.rows}
          </span>
        )}
        <span className="console-font" role="group" aria-label="Text size">
          <button
            type="button"
            className="button button-quiet"
            aria-label="Smaller text"
            onClick={() => terminal.changeFontSize(-1)}
          >
            A−
          </button>
          <button
            type="button"
            className="button button-quiet"
            aria-label="Larger text"
            onClick={() => terminal.changeFontSize(1)}
          >
            A+
          </button>
        </span>
      </div>
    </div>
  );
}

function keyboardText(keyboard: NonNullable<ConsoleTerminalState["keyboard"]>): string {
  if (keyboard.canType) return "You have the keyboard.";
  if (!keyboard.holderIsOwner) return `${keyboard.holder} has the keyboard.`;
  return keyboard.canTake ? "Read-only: the student has the keyboard." : "Read-only view.";
}
