import "./shared-console.css";
import { useTranslation } from "react-i18next";
import { LangText } from "./lang-text.tsx";
import { consoleNoticeText } from "../lib/console-notice.ts";
import type { ConnectionStatus } from "../lib/connection-status.ts";
import { useLanguage } from "../lib/i18n/use-language.ts";

/**
 * Where a shared console (the serial console, a terminal, the screen) stands, with the BFF's reason
 * while it waits or once it ended, and "Reconnect now" while the browser waits to reopen its socket.
 */
export function ConnectionStatusLine({
  status,
  onReconnectNow,
}: {
  status: ConnectionStatus;
  onReconnectNow: () => void;
}) {
  const { t } = useTranslation();
  const { language } = useLanguage();
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
  return (
    <p className="console-status" role="status" data-status={status.kind}>
      <span className="console-status-label">{t(`console.status.${status.kind}`)}</span>
      {detail && <span className="console-status-detail">{detail}</span>}
      {status.kind === "reconnecting" && status.retryAt !== null && (
        <button type="button" className="button button-quiet" onClick={onReconnectNow}>
          {t("console.reconnectNow")}
        </button>
      )}
    </p>
  );
}
