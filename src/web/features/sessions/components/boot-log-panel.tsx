import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ErrorText } from "../../../components/error-text.tsx";
import { Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useBootLog } from "../api/get-boot-log.ts";
import "./boot-log.css";

/**
 * What the VM printed on its serial console while it boots, followed live until the console connects:
 * students see what happened before they could connect (cloud-init's output, errors included).
 */
export function BootLogPanel({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  return (
    <section className="boot-log" data-testid="boot-log" aria-labelledby="boot-log-title">
      <h2 className="section-title" id="boot-log-title">
        {t("sessions.bootLog.title")}
      </h2>
      <BootLogBody sessionId={sessionId} follow labelId="boot-log-title" />
    </section>
  );
}

/** The same log once the live console has connected: folded away, fetched each time it is opened. */
export function EarlierBootLog({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const [expanded, setExpanded] = useState(false);
  return (
    <details
      className="boot-log"
      data-testid="boot-log"
      onToggle={(event) => setExpanded(event.currentTarget.open)}
    >
      <summary id="boot-log-summary">{t("sessions.bootLog.earlierTitle")}</summary>
      {expanded && <BootLogBody sessionId={sessionId} follow={false} labelId="boot-log-summary" />}
    </details>
  );
}

function BootLogBody({
  sessionId,
  follow,
  labelId,
}: {
  sessionId: string;
  follow: boolean;
  labelId: string;
}) {
  const { t } = useTranslation();
  const query = useBootLog(sessionId, { follow });
  if (query.isPending) return <Loading label={t("sessions.bootLog.loading")} />;
  if (!query.data) {
    return (
      <p className="muted">
        <ErrorText error={query.error} />
      </p>
    );
  }
  const { lines, logging } = query.data;
  return (
    <>
      <RefreshWarning error={query.error} />
      {logging === "off" ? (
        <p className="muted">{t("sessions.bootLog.off")}</p>
      ) : lines.length === 0 ? (
        <p className="muted">{t("sessions.bootLog.empty")}</p>
      ) : (
        <pre aria-labelledby={labelId} tabIndex={0} translate="no">
          {lines.join("\n")}
        </pre>
      )}
    </>
  );
}
