// /sessions/:sessionId: one session with everything around it, each part from its own feature: staff's
// announcements to the student (announcements), the card and boot log (sessions), the console with
// the VM's screen in a tab of its own (console, screen), the lab's tasks (labs), the raised hand (help), the self-checks (grading), files in and out of the home
// (files).
import { useCallback, useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router";
import type { Session } from "../../../common/api.ts";
import { graphicalConsole } from "../../../common/console-protocol.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../components/page-state.tsx";
import { isApiError } from "../../lib/api-error.ts";
import { useFormat } from "../../lib/i18n/use-format.ts";
import { paths } from "../../lib/paths.ts";
import { isStaff } from "../../lib/roles.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { AnnouncementBanners } from "../../features/announcements/components/announcement-banners.tsx";
import { SessionConsole } from "../../features/console/components/session-console.tsx";
import { FilesPanel } from "../../features/files/components/files-panel.tsx";
import { SelfCheckPanel } from "../../features/grading/components/self-check-panel.tsx";
import { HelpPanel } from "../../features/help/components/help-panel.tsx";
import { useLabs, useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabTasks } from "../../features/labs/components/lab-tasks.tsx";
import { ScreenPanel } from "../../features/screen/components/screen-panel.tsx";
import { useSession } from "../../features/sessions/api/get-session.ts";
import { useSessionChanged } from "../../features/sessions/api/session-changed.ts";
import { BootLogPanel, EarlierBootLog } from "../../features/sessions/components/boot-log-panel.tsx";
import { SessionCard } from "../../features/sessions/components/session-card.tsx";

export function SessionPage() {
  const { t } = useTranslation();
  const { sessionId = "" } = useParams();
  const query = useSession(sessionId);
  const session = query.data;
  const gone = isApiError(query.error, 404);

  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("sessions.detail.title") })}</title>
      <BackLink />
      <h1 className="page-title">{t("sessions.detail.title")}</h1>
      {query.isPending ? (
        <Loading label={t("sessions.detail.loading")} />
      ) : gone ? (
        <div className="panel" role="alert">
          <h2 className="panel-title">{t("sessions.detail.notFound")}</h2>
          <NotFoundBody />
        </div>
      ) : !session ? (
        <ErrorPanel
          title={t("sessions.detail.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <SessionDetails session={session} />
        </>
      )}
    </main>
  );
}

/** Why a session may not be there, and where to look instead: staff and students look elsewhere. */
function NotFoundBody() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  return (
    <p>{isStaff(me.role) ? t("sessions.detail.notFoundBodyStaff") : t("sessions.detail.notFoundBody")}</p>
  );
}

/** Staff arrive here from the sessions table, students from their labs page. */
function BackLink() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const staff = isStaff(me.role);
  return (
    <p>
      <Link to={staff ? paths.sessions.to() : paths.home.to()} className="back-link">
        {staff ? t("sessions.detail.backToSessions") : t("sessions.detail.backToLabs")}
      </Link>
    </p>
  );
}

function SessionDetails({ session }: { session: Session }) {
  const { t } = useTranslation();
  const format = useFormat();
  const labs = useLabs();
  const labTitle = useLabTitles();
  const sessionChanged = useSessionChanged();
  const navigate = useNavigate();
  const bootLog = useBootLogPlacement(session);
  const me = useSignedInUser();
  const lab = labs.data?.find((each) => each.id === session.labId);
  return (
    <>
      {/* First: a word to the whole class ("the proxy is down") must be seen before anything else. */}
      {me.username === session.owner && <AnnouncementBanners sessionId={session.id} />}
      <SessionCard
        session={session}
        lab={lab}
        labTitle={labTitle(session.labId)}
        headingLevel={2}
        showOpenLink={false}
        onEnded={() => navigate(paths.home.to())}
      />
      {/* Right after the card (the boot log while it boots), so the console is on screen at once. */}
      {bootLog.shown && !bootLog.folded && <BootLogPanel sessionId={session.id} />}
      <SessionConsole
        key={session.id}
        session={session}
        terminals={labs.isPending ? undefined : (lab?.session.terminals ?? 0)}
        consoles={labs.isPending ? undefined : (lab?.session.consoles ?? ["serial"])}
        screen={(props) => <ScreenPanel sessionId={session.id} {...props} />}
        onConnectionChange={bootLog.onConsoleConnection}
      />
      {/* Below the console, so the connected console keeps its place on the screen. */}
      {bootLog.shown && bootLog.folded && <EarlierBootLog sessionId={session.id} />}
      {lab && <LabTasks lab={lab} />}
      <HelpPanel session={session} onChanged={sessionChanged} />
      <dl className="details">
        <dt>{t("sessions.detail.student")}</dt>
        <dd translate="no">{session.owner}</dd>
        <dt>{t("sessions.detail.id")}</dt>
        <dd>
          <code translate="no">{session.id}</code>
        </dd>
        <dt>{t("sessions.detail.started")}</dt>
        <dd>{format.dateTime(session.createdAt)}</dd>
        <dt>{t("sessions.detail.ends")}</dt>
        <dd>{format.dateTime(session.expiresAt)}</dd>
      </dl>
      <p>
        <Link to={paths.recording.to(session.id)}>{t("recordings.replay")}</Link>
        {lab?.session.consoles.includes("graphical") && (
          <>
            {" · "}
            <Link to={paths.recording.to(session.id, graphicalConsole)}>{t("recordings.replayScreen")}</Link>
          </>
        )}
      </p>
      <SelfCheckPanel session={session} labs={labs} />
      <FilesPanel session={session} />
    </>
  );
}

/**
 * The boot log stays open, following the boot, until the live console has connected: it may take a
 * moment, or fail (kicked, refused). Then it folds away. A restart boots the VM again, so when the
 * session goes back to starting it opens again, unless the console is connected right now.
 */
function useBootLogPlacement(session: Session) {
  const [consoleConnected, setConsoleConnected] = useState(false);
  const [folded, setFolded] = useState(false);
  const [seenStatus, setSeenStatus] = useState(session.status);
  if (session.status !== seenStatus) {
    setSeenStatus(session.status);
    if (session.status === "starting") setFolded(consoleConnected);
  }
  const onConsoleConnection = useCallback((connected: boolean) => {
    setConsoleConnected(connected);
    if (connected) setFolded(true);
  }, []);
  const shown = session.status === "starting" || session.status === "running";
  return { shown, folded, onConsoleConnection };
}
