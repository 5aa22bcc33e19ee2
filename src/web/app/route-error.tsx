import { useTranslation } from "react-i18next";
import { ErrorPanel } from "../components/page-state.tsx";

/** Last line of defence for a page that crashed while rendering: say so and offer a reload. */
export function RouteError({ error }: { error: unknown }) {
  const { t } = useTranslation();
  return (
    <main className="page">
      <ErrorPanel title={t("app.routeError")} error={error} onRetry={() => window.location.reload()} />
    </main>
  );
}
