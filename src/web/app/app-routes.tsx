import { lazy, type ComponentType } from "react";
import { Route, Routes } from "react-router";
import { RequireAuth } from "../features/auth/components/require-auth.tsx";
import { RequireRole } from "../features/auth/components/require-role.tsx";
import { SignInPage } from "../features/auth/components/sign-in-page.tsx";
import { paths } from "../lib/paths.ts";
import { AppLayout } from "./app-layout.tsx";
import { BareLayout } from "./bare-layout.tsx";
import { HomePage } from "./routes/home-page.tsx";
import { NotFoundPage } from "./routes/not-found-page.tsx";

/** A page whose code loads on its first visit, in a chunk of its own. */
function lazyPage<Name extends string>(load: () => Promise<Record<Name, ComponentType>>, name: Name) {
  return lazy(async () => ({ default: (await load())[name] }));
}

// Sign-in and the home page are in the first download, since everyone opens them. The other pages are
// for staff, or come later in a student's visit.
const SessionPage = lazyPage(() => import("./routes/session-page.tsx"), "SessionPage");
const RecordingsPage = lazyPage(() => import("./routes/recordings-page.tsx"), "RecordingsPage");
const RecordingPage = lazyPage(() => import("./routes/recording-page.tsx"), "RecordingPage");
const SessionsPage = lazyPage(() => import("./routes/sessions-page.tsx"), "SessionsPage");
const WallIndexPage = lazyPage(() => import("./routes/wall-index-page.tsx"), "WallIndexPage");
const WallPage = lazyPage(() => import("./routes/wall-page.tsx"), "WallPage");
const GradingIndexPage = lazyPage(() => import("./routes/grading-index-page.tsx"), "GradingIndexPage");
const GradingPage = lazyPage(() => import("./routes/grading-page.tsx"), "GradingPage");
const ClassesPage = lazyPage(() => import("./routes/classes-page.tsx"), "ClassesPage");
const DoctorPage = lazyPage(() => import("./routes/doctor-page.tsx"), "DoctorPage");
const AuditPage = lazyPage(() => import("./routes/audit-page.tsx"), "AuditPage");
const LtiPage = lazyPage(() => import("./routes/lti-page.tsx"), "LtiPage");
const DeepLinkPage = lazyPage(() => import("./routes/deep-link-page.tsx"), "DeepLinkPage");

const staff = ["ta", "instructor"] as const;
const instructors = ["instructor"] as const;

export function AppRoutes() {
  return (
    <Routes>
      <Route path={paths.signIn.pattern} element={<SignInPage />} />
      {/* Without sign-in: an LMS frames the picker, where Lab Console's cookie may never arrive; its
          request's id is all it needs (docs/lti.md). */}
      <Route element={<BareLayout />}>
        <Route path={paths.ltiDeepLink.pattern} element={<DeepLinkPage />} />
      </Route>
      <Route element={<RequireAuth />}>
        <Route element={<AppLayout />}>
          <Route path={paths.home.pattern} element={<HomePage />} />
          <Route path={paths.session.pattern} element={<SessionPage />} />
          <Route path={paths.recordings.pattern} element={<RecordingsPage />} />
          <Route path={paths.recording.pattern} element={<RecordingPage />} />
          <Route element={<RequireRole roles={staff} />}>
            <Route path={paths.sessions.pattern} element={<SessionsPage />} />
            <Route path={paths.walls.pattern} element={<WallIndexPage />} />
            <Route path={paths.labWall.pattern} element={<WallPage />} />
            <Route path={paths.grading.pattern} element={<GradingIndexPage />} />
            <Route path={paths.labGrading.pattern} element={<GradingPage />} />
            <Route path={paths.classes.pattern} element={<ClassesPage />} />
          </Route>
          <Route element={<RequireRole roles={instructors} />}>
            <Route path={paths.doctor.pattern} element={<DoctorPage />} />
            <Route path={paths.audit.pattern} element={<AuditPage />} />
            <Route path={paths.lti.pattern} element={<LtiPage />} />
          </Route>
          <Route path="*" element={<NotFoundPage />} />
        </Route>
      </Route>
    </Routes>
  );
}
