import { useTranslation } from "react-i18next";
import { useBootLog } from "../api/get-boot-log.ts";
import "./boot-log.css";

/**
 * What the VM printed on its serial console while it boots, before the live console opens: students
 * see what happened before they could connect (cloud-init's output, errors included).
 */
export function BootLogPanel({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const query = useBootLog(sessionId);
  const lines = query.data?.lines ?? [];
  return (
    <section className="boot-log" aria-labelledby="boot-log-title">
      <h2 className="section-title" id="boot-log-title">
        {t("sessions.bootLog.title")}
      </h2>
      {lines.length === 0 ? (
        <p className="muted">{t("sessions.bootLog.empty")}</p>
      ) : (
        <pre aria-labelledby="boot-log-title" tabIndex={0} translate="no">
          {lines.join("\n")}
        </pre>
      )}
    </section>
  );
}
