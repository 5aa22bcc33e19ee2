import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { LangText } from "../../../components/lang-text.tsx";
import { english } from "../../../lib/i18n/pick-translation.ts";
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
  const { status, keyboard, guestSize } = state;
  // The BFF's words are English; the browser's own lost connection is said in the page's language.
  const detail =
    status.kind === "ended" ? (
      <LangText text={english(status.reason)} />
    ) : status.kind === "reconnecting" && status.retryAt !== null ? (
      t("console.lostConnection")
    ) : status.kind !== "connected" && status.message !== null ? (
      <LangText text={english(status.message)} />
    ) : null;
  const canFit = status.kind === "connected" && keyboard?.canType === true;

  return (
    <div className="console-toolbar">
      <p className="console-status" role="status" data-status={status.kind}>
        <span className="console-status-label">{t(`console.status.${status.kind}`)}</span>
        {detail && <span className="console-status-detail">{detail}</span>}
        {status.kind === "reconnecting" && status.retryAt !== null && (
          <button type="button" className="button button-quiet" onClick={() => terminal.reconnectNow()}>
            {t("console.reconnectNow")}
          </button>
        )}
      </p>

      {keyboard && status.kind !== "ended" && (
        <p className="console-keyboard" aria-live="polite">
          <span>{keyboardText(keyboard, t)}</span>
          {keyboard.canTake && (
            <button type="button" className="button button-quiet" onClick={() => terminal.takeKeyboard()}>
              {observe ? t("console.keyboard.take") : t("console.keyboard.takeBack")}
            </button>
          )}
          {keyboard.canRelease && (
            <button type="button" className="button button-quiet" onClick={() => terminal.releaseKeyboard()}>
              {t("console.keyboard.giveBack")}
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
          title={t("console.fitExplain")}
        >
          {t("console.fit")}
        </button>
        {guestSize && (
          <span className="muted small" aria-label={t("console.guestSize")}>
            {guestSize.cols}×{guestSize.rows}
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

function keyboardText(keyboard: NonNullable<ConsoleTerminalState["keyboard"]>, t: TFunction): string {
  if (keyboard.canType) return t("console.keyboard.yours");
  if (!keyboard.holderIsOwner) return t("console.keyboard.holder", { holder: keyboard.holder });
  return keyboard.canTake ? t("console.keyboard.studentHas") : t("console.keyboard.readOnly");
}
