import { useTranslation } from "react-i18next";
import { ConnectionStatusLine } from "../../../components/connection-status-line.tsx";
import { KeyboardControls, KeyboardNewsLine } from "../../../components/keyboard-controls.tsx";
import { ViewerList } from "../../../components/viewer-list.tsx";
import type { ConsoleTerminal, ConsoleTerminalState } from "../lib/console-terminal.ts";

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
  const { t } = useTranslation();
  const { status, keyboard, guestSize, viewers, keyboardNews, fitFailure, inputRefused } = state;
  const canFit = status.kind === "connected" && keyboard?.canType === true;

  return (
    <div className="console-toolbar">
      <ConnectionStatusLine status={status} onReconnectNow={() => terminal.reconnectNow()} />

      {viewers && status.kind !== "ended" && <ViewerList viewers={viewers} />}
      <KeyboardNewsLine news={status.kind !== "ended" ? keyboardNews : null} />

      {keyboard && status.kind !== "ended" && (
        <KeyboardControls
          keyboard={keyboard}
          observe={observe}
          onTake={() => terminal.takeKeyboard()}
          onRelease={() => terminal.releaseKeyboard()}
        />
      )}

      <div className="console-actions">
        <button
          type="button"
          className="button button-quiet"
          disabled={!canFit}
          onClick={() => terminal.fitGuest()}
          title={t("console.fitExplain")}
        >
          {t("console.fit")}
        </button>
        {guestSize && (
          <span className="muted small" aria-label={t("console.guestSize")}>
            {guestSize.cols}×{guestSize.rows}
          </span>
        )}
        {fitFailure && (
          <span className="console-fit-failed" role="alert">
            {t(`console.fitFailed.${fitFailure}`)}
          </span>
        )}
        {inputRefused && (
          <span className="console-fit-failed" role="alert">
            {t("console.inputRefused")}
          </span>
        )}
        <button
          type="button"
          className="button button-quiet"
          aria-pressed={state.screenReaderMode}
          onClick={() => terminal.setScreenReaderMode(!state.screenReaderMode)}
        >
          {t("console.screenReaderMode")}
        </button>
        <span className="console-font" role="group" aria-label={t("console.textSize")}>
          <button
            type="button"
            className="button button-quiet"
            aria-label={t("console.smallerText")}
            onClick={() => terminal.changeFontSize(-1)}
          >
            {t("console.smallerSymbol")}
          </button>
          <button
            type="button"
            className="button button-quiet"
            aria-label={t("console.largerText")}
            onClick={() => terminal.changeFontSize(1)}
          >
            {t("console.largerSymbol")}
          </button>
        </span>
      </div>
    </div>
  );
}
