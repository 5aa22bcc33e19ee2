import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import { Loading } from "../../../components/page-state.tsx";
import type { ConsoleViewProps } from "./console-view.tsx";

// xterm.js is most of the console's weight: it loads only when a console opens, never on the dashboard.
const ConsoleView = lazy(() => import("./console-view.tsx"));

/** A session's console: read-write for its owner, read-only (observe) for staff. */
export function ConsolePanel(props: ConsoleViewProps) {
  const { t } = useTranslation();
  return (
    <Suspense fallback={<Loading label={t("console.loading")} />}>
      <ConsoleView {...props} />
    </Suspense>
  );
}
