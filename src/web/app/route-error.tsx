import { useRouteError } from "react-router";
import { ErrorPanel } from "../components/page-state.tsx";

/** Last line of defence for a page that crashed while rendering: say so and offer a reload. */
export function RouteError() {
  const error = useRouteError();
  return (
    <main className="page">
      <ErrorPanel title="This page stopped working" error={error} onRetry={() => window.location.reload()} />
    </main>
  );
}
