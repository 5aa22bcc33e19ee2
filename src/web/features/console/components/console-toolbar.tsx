import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { LangText } from "../../../components/lang-text.tsx";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import { consoleNoticeText } from "../lib/console-notice.ts";
import type { ConsoleTerminal, ConsoleTerminalState } from "../lib/console-terminal.ts";
import type { KeyboardNews } from "../lib/keyboard-news.ts";
import { ConsoleViewerList } from "./console-viewers.tsx";

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
  const { language } = useLanguage();
  const { status, keyboard, guestSize, viewers, keyboardNews, fitFailure, inputRefused } = state;
  // The BFF's words are English; the browser's own lost connection is said in the page's language.
  const detail =
    status.kind === "ended" ? (
      <LangText text={consoleNoticeText(status.notice, status.reason, t, language)} />
    ) : status.kind === "reconnecting" && status.retryAt !== null ? (
      t("console.lostConnection")
    ) : status.kind !== "connected" && status.message !== null ? (
      <LangText text={consoleNoticeText(status.notice, status.message, t, language)} />
    ) : status.kind === "connected" && status.notice ? (
      // The idle warning: typing here resets it, which the next status clears.
      <LangText text={consoleNoticeText(status.notice, status.message ?? "", t, language)} />
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

      {viewers && status.kind !== "ended" && <ConsoleViewerList viewers={viewers} />}
      {/* Staff taking or giving back the keyboard is said aloud, to the student above all. */}
      <p className="console-keyboard-news" role="status" data-testid="console-keyboard-news">
        {keyboardNews && status.kind !== "ended" ? newsText(keyboardNews, t) : ""}
      </p>

      {keyboard && status.kind !== "ended" && (
        <p className="console-keyboard">
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

function newsText(news: KeyboardNews, t: TFunction): string {
  const who = { name: news.username, role: t(`roles.${news.role}`) };
  return news.kind === "taken"
    ? t("console.keyboard.newsTaken", who)
    : t("console.keyboard.newsReturned", who);
}

function keyboardText(keyboard: NonNullable<ConsoleTerminalState["keyboard"]>, t: TFunction): string {
  if (keyboard.canType) return t("console.keyboard.yours");
  if (!keyboard.holderIsOwner) return t("console.keyboard.holder", { holder: keyboard.holder });
  return keyboard.canTake ? t("console.keyboard.studentHas") : t("console.keyboard.readOnly");
}
