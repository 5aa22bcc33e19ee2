import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { Role } from "../../../../common/api.ts";
import { useSignedInUser } from "./signed-in-user.ts";

/** Shows `children` only to the given roles; the BFF enforces the same rule on its side. */
export function RequireRole({ roles, children }: { roles: readonly Role[]; children: ReactNode }) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  if (roles.includes(me.role)) return children;
  return (
    <main className="page">
      <div className="panel" role="alert">
        <h1 className="panel-title">{t("auth.notForYou")}</h1>
        <p>{t("auth.staffOnly")}</p>
      </div>
    </main>
  );
}
