import "./shared-console.css";
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { useSignedInUser } from "../lib/signed-in-user.ts";
import type { ConsoleViewers } from "../lib/keyboard-news.ts";

/**
 * Everyone with this console (or screen) open, by name and role, and who types: watching is never silent. The
 * names are the BFF's, from the sign-ins it checked.
 */
export function ViewerList({ viewers }: { viewers: ConsoleViewers }) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const labelId = useId();
  return (
    <div className="console-viewers" data-testid="console-viewers">
      <span className="console-viewers-label" id={labelId}>
        {t("console.viewers.label")}
      </span>
      <ul aria-labelledby={labelId}>
        {viewers.viewers.map((viewer) => (
          <li key={viewer.username} data-username={viewer.username} data-mode={viewer.mode}>
            {t(viewer.mode === "type" ? "console.viewers.typing" : "console.viewers.watching", {
              name:
                viewer.username === me.username
                  ? t("console.viewers.you", { name: viewer.username })
                  : viewer.username,
              role: t(`roles.${viewer.role}`),
            })}
          </li>
        ))}
      </ul>
    </div>
  );
}
