import { Suspense } from "react";
import { useTranslation } from "react-i18next";
import { NavLink, Outlet } from "react-router";
import { LanguageSwitcher } from "../components/language-switcher.tsx";
import { useSignedInUser } from "../lib/signed-in-user.ts";
import { isStaff } from "../lib/roles.ts";
import { UserMenu } from "../features/auth/components/user-menu.tsx";
import { paths } from "../lib/paths.ts";
import { PageLoading } from "./page-loading.tsx";

export function AppLayout() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  return (
    <>
      <a className="skip-link" href="#content">
        {t("app.skipToContent")}
      </a>
      <header className="app-header">
        <NavLink to={paths.home.to()} className="brand" end>
          {t("app.name")}
        </NavLink>
        <nav aria-label={t("app.nav.label")} className="main-nav">
          <NavLink to={paths.home.to()} end>
            {t("app.nav.labs")}
          </NavLink>
          {isStaff(me.role) && <NavLink to={paths.sessions.to()}>{t("app.nav.sessions")}</NavLink>}
          {isStaff(me.role) && <NavLink to={paths.walls.to()}>{t("app.nav.wall")}</NavLink>}
          {isStaff(me.role) && <NavLink to={paths.grading.to()}>{t("app.nav.grading")}</NavLink>}
          {isStaff(me.role) && <NavLink to={paths.classes.to()}>{t("app.nav.classes")}</NavLink>}
          <NavLink to={paths.recordings.to()}>{t("app.nav.recordings")}</NavLink>
          {me.role === "instructor" && <NavLink to={paths.doctor.to()}>{t("app.nav.doctor")}</NavLink>}
          {me.role === "instructor" && <NavLink to={paths.audit.to()}>{t("app.nav.audit")}</NavLink>}
          {me.role === "instructor" && <NavLink to={paths.lti.to()}>{t("app.nav.lti")}</NavLink>}
        </nav>
        <LanguageSwitcher />
        <UserMenu />
      </header>
      <div id="content" className="app-content">
        {/* A link keeps the current page on screen until the next page's code is in (the router
            navigates in a transition): the fallback only shows when the app starts on such a page. */}
        <Suspense fallback={<PageLoading />}>
          <Outlet />
        </Suspense>
      </div>
    </>
  );
}
