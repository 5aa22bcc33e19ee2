import { useTranslation } from "react-i18next";
import { Outlet } from "react-router";
import type { Role } from "../../../../common/api.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";

/** Renders the child routes only for the given roles; the BFF enforces the same rule on its side. */
export function RequireRole({ roles }: { roles: readonly Role[] }) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  if (roles.includes(me.role)) return <Outlet />;
  return (
    <main className="page">
      <div className="panel" role="alert">
        <h1 className="panel-title">{t("auth.notForYou")}</h1>
        <p>{roles.includes("ta") ? t("auth.staffOnly") : t("auth.instructorsOnly")}</p>
      </div>
    </main>
  );
}
