import { createBrowserRouter } from "react-router";
import { RequireAuth } from "../features/auth/components/require-auth.tsx";
import { RequireRole } from "../features/auth/components/require-role.tsx";
import { SignInPage } from "../features/auth/components/sign-in-page.tsx";
import { AuditPage } from "../features/audit/components/audit-page.tsx";
import { DoctorPage } from "../features/doctor/components/doctor-page.tsx";
import { GradingIndexPage } from "../features/grading/components/grading-index-page.tsx";
import { GradingPage } from "../features/grading/components/grading-page.tsx";
import { SessionPage } from "../features/sessions/components/session-page.tsx";
import { RecordingPage } from "../features/recordings/components/recording-page.tsx";
import { RecordingsPage } from "../features/recordings/components/recordings-page.tsx";
import { SessionsPage } from "../features/sessions/components/sessions-page.tsx";
import { WallPage } from "../features/wall/components/wall-page.tsx";
import { paths } from "../lib/paths.ts";
import { AppLayout } from "./app-layout.tsx";
import { HomePage } from "./home-page.tsx";
import { NotFoundPage } from "./not-found-page.tsx";
import { RouteError } from "./route-error.tsx";

const staff = ["ta", "instructor"] as const;
const instructors = ["instructor"] as const;

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
                { path: paths.recordings.pattern, element: <RecordingsPage /> },
                { path: paths.recording.pattern, element: <RecordingPage /> },
                {
                  path: paths.labWall.pattern,
                  element: (
                    <RequireRole roles={staff}>
                      <WallPage />
                    </RequireRole>
                  ),
                },
                {
                  path: paths.grading.pattern,
                  element: (
                    <RequireRole roles={staff}>
                      <GradingIndexPage />
                    </RequireRole>
                  ),
                },
                {
                  path: paths.labGrading.pattern,
                  element: (
                    <RequireRole roles={staff}>
                      <GradingPage />
                    </RequireRole>
                  ),
                },
                {
                  path: paths.doctor.pattern,
                  element: (
                    <RequireRole roles={instructors}>
                      <DoctorPage />
                    </RequireRole>
                  ),
                },
                {
                  path: paths.audit.pattern,
                  element: (
                    <RequireRole roles={instructors}>
                      <AuditPage />
                    </RequireRole>
                  ),
                },
                { path: "*", element: <NotFoundPage /> },
              ],
            },
          ],
        },
      ],
    },
  ]);
}
