// Every route and every link in the SPA comes from here.

export const paths = {
  home: {
    pattern: "/",
    to: () => "/",
  },
  signIn: {
    pattern: "/sign-in",
    /** `from` is where to return after signing in. */
    to: (from?: string) => (from && from !== "/" ? `/sign-in?${new URLSearchParams({ from })}` : "/sign-in"),
  },
  sessions: {
    pattern: "/sessions",
    to: () => "/sessions",
  },
  session: {
    pattern: "/sessions/:sessionId",
    to: (sessionId: string) => `/sessions/${encodeURIComponent(sessionId)}`,
  },
  recordings: {
    pattern: "/recordings",
    to: () => "/recordings",
  },
  recording: {
    pattern: "/recordings/:sessionId",
    /** `terminal`: one of the session's terminals' recordings instead of its serial console's. */
    to: (sessionId: string, terminal?: number) =>
      `/recordings/${encodeURIComponent(sessionId)}${terminal === undefined ? "" : `?terminal=${terminal}`}`,
  },
  walls: {
    pattern: "/wall",
    to: () => "/wall",
  },
  labWall: {
    pattern: "/labs/:labId/wall",
    /** `view`: the wall's search, filters and sort as URL parameters (features/wall/lib/wall-view.ts). */
    to: (labId: string, view?: Readonly<Record<string, string>>) => {
      const query = new URLSearchParams(view).toString();
      return `/labs/${encodeURIComponent(labId)}/wall${query ? `?${query}` : ""}`;
    },
  },
  grading: {
    pattern: "/grading",
    to: () => "/grading",
  },
  labGrading: {
    pattern: "/grading/:labId",
    to: (labId: string) => `/grading/${encodeURIComponent(labId)}`,
  },
  classes: {
    pattern: "/classes",
    to: () => "/classes",
  },
  doctor: {
    pattern: "/admin/doctor",
    to: () => "/admin/doctor",
  },
  audit: {
    pattern: "/admin/audit",
    to: () => "/admin/audit",
  },
  lti: {
    pattern: "/lti",
    to: () => "/lti",
  },
  /** Where the BFF sends an instructor's deep-linking launch (POST /api/lti/launch), in the LMS's frame or not. */
  ltiDeepLink: {
    pattern: "/lti/deep-links/:requestId",
    to: (requestId: string) => `/lti/deep-links/${encodeURIComponent(requestId)}`,
  },
} as const;

/** Only same-origin paths are followed after sign-in, so a crafted link cannot send people elsewhere. */
export function safeReturnPath(from: string | null): string {
  if (!from || !from.startsWith("/") || from.startsWith("//") || from.startsWith("/\\"))
    return paths.home.to();
  return from;
}
