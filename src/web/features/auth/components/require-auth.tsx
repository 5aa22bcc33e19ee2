import { useTranslation } from "react-i18next";
import { Navigate, Outlet, useLocation } from "react-router";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { paths } from "../../../lib/paths.ts";
import { useMe } from "../api/get-me.ts";
import { SignedInUserContext } from "../../../lib/signed-in-user.ts";

/** Renders the child routes for a signed-in person; anyone else goes to sign-in and comes back after. */
export function RequireAuth() {
  const { t } = useTranslation();
  const me = useMe();
  const location = useLocation();

  if (me.isPending) return <Loading label={t("auth.loading")} />;
  if (me.isError) {
    return (
      <main className="page">
        <ErrorPanel title={t("auth.notAnswering")} error={me.error} onRetry={() => void me.refetch()} />
      </main>
    );
  }
  if (!me.data) {
    const from = `${location.pathname}${location.search}`;
    return <Navigate to={paths.signIn.to(from)} replace />;
  }
  return (
    <SignedInUserContext value={me.data}>
      <Outlet />
    </SignedInUserContext>
  );
}
