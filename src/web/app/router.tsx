import { createBrowserRouter } from "react-router";
import { RequireAuth } from "../features/auth/components/require-auth.tsx";
import { RequireRole } from "../features/auth/components/require-role.tsx";
import { SignInPage } from "../features/auth/components/sign-in-page.tsx";
import { SessionPage } from "../features/sessions/components/session-page.tsx";
import { SessionsPage } from "../features/sessions/components/sessions-page.tsx";
import { paths } from "../lib/paths.ts";
import { AppLayout } from "./app-layout.tsx";
import { HomePage } from "./home-page.tsx";
import { NotFoundPage } from "./not-found-page.tsx";
import { RouteError } from "./route-error.tsx";

const staff = ["ta", "instructor"] as const;

export function createRouter() {
  return createBrowserRouter([
    {
      errorElement: <RouteError />,
      children: [
        { path: paths.signIn.pattern, element: <SignInPage /> },
        {
          element: <RequireAuth />,
          children: [
            {
              element: <AppLayout />,
              children: [
                { path: paths.home.pattern, element: <HomePage /> },
                {
                  path: paths.sessions.pattern,
                  element: (
                    <RequireRole roles={staff}>
                      <SessionsPage />
                    </RequireRole>
                  ),
                },
                { path: paths.session.pattern, element: <SessionPage /> },
                { path: "*", element: <NotFoundPage /> },
              ],
            },
          ],
        },
      ],
    },
  ]);
}
