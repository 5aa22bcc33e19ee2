import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { ConsolePanel } from "./console-panel.tsx";

/**
 * The console section of a session page: the owner types, staff observe. `onConnectionChange` hears
 * when the live console connects or drops (the page keeps the boot log open until it connects).
 */
export function SessionConsole({
  session,
  onConnectionChange,
}: {
  session: Session;
  onConnectionChange?: (connected: boolean) => void;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const [opened, setOpened] = useState(false);
  // Once open it stays open: when the VM goes away the console itself says so, with the reason.
  if (session.status === "running" && !opened) setOpened(true);

  return (
    <div className="session-console">
      <h2 className="section-title">{t("console.title")}</h2>
      {opened ? (
        <ConsolePanel
          sessionId={session.id}
          observe={me.username !== session.owner}
          onConnectionChange={onConnectionChange}
        />
      ) : (
        <p className="muted">
          {session.status === "starting" ? t("console.opensWhenRunning") : t("console.onlyWhileRunning")}
        </p>
      )}
    </div>
  );
}
