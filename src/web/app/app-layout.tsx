import { NavLink, Outlet } from "react-router";
import { useSignedInUser } from "../features/auth/components/signed-in-user.ts";
import { isStaff } from "../features/auth/components/role-label.ts";
import { UserMenu } from "../features/auth/components/user-menu.tsx";
import { paths } from "../lib/paths.ts";

export function AppLayout() {
  const me = useSignedInUser();
  return (
    <>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="app-header">
        <NavLink to={paths.home.to()} className="brand" end>
          Lab Console
        </NavLink>
        <nav aria-label="Main" className="main-nav">
          <NavLink to={paths.home.to()} end>
            Labs
          </NavLink>
          {isStaff(me.role) && <NavLink to={paths.sessions.to()}>Sessions</NavLink>}
          {isStaff(me.role) && <NavLink to={paths.grading.to()}>Grading</NavLink>}
          {me.role === "instructor" && <NavLink to={paths.doctor.to()}>Doctor</NavLink>}
          {me.role === "instructor" && <NavLink to={paths.audit.to()}>Audit log</NavLink>}
        </nav>
        <UserMenu />
      </header>
      <div id="content" className="app-content">
        <Outlet />
      </div>
    </>
  );
}
