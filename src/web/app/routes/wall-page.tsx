// /labs/:labId/wall: the class wall, the wall feature's live stream shown with the sessions feature's
// status badges and the help feature's raised hands.
import { memo } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams } from "react-router";
import type { WallScreen, WallSession } from "../../../common/wall-protocol.ts";
import { TimeLeft } from "../../components/duration.tsx";
import { LangText } from "../../components/lang-text.tsx";
import { Loading } from "../../components/page-state.tsx";
import { paths } from "../../lib/paths.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { HandBadge } from "../../features/help/components/hand-badge.tsx";
import { StatusBadge } from "../../features/sessions/components/status-badge.tsx";
import { useWallStream } from "../../features/wall/api/use-wall-stream.ts";
import { WallScreenText } from "../../features/wall/components/wall-screen-text.tsx";
import "../../features/wall/wall.css";

/** The class wall: every session of one lab as a live miniature of its console. */
export function WallPage() {
  const { t } = useTranslation();
  const { labId = "" } = useParams();
  const labTitle = useLabTitles();
  const wall = useWallStream(labId);
  const sessions = wall.sessions && [...wall.sessions].sort(byRaisedHandThenOwner);

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("wall.title") })}</title>
      <h1 className="page-title">
        {t("wall.title")}: <LangText text={labTitle(labId)} />
      </h1>
      <p className="muted" data-testid="wall-state" data-state={wall.state}>
        {t(`wall.state.${wall.state}`)}
      </p>
      {!sessions ? (
        <Loading label={t("wall.loading")} />
      ) : sessions.length === 0 ? (
        <p className="empty">{t("wall.empty")}</p>
      ) : (
        <ul className="wall-grid" aria-label={t("wall.label")}>
          {sessions.map((session) => (
            <li key={session.sessionId}>
              <WallTile session={session} screen={wall.screens.get(session.sessionId)} />
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}

function byRaisedHandThenOwner(a: WallSession, b: WallSession): number {
  const waiting = (session: WallSession) => (session.help && session.help.acknowledgedBy === null ? 0 : 1);
  return waiting(a) - waiting(b) || a.owner.localeCompare(b.owner);
}

/** Re-renders only when its session or its screen changed (both keep their objects otherwise). */
const WallTile = memo(function WallTile({
  session,
  screen,
}: {
  session: WallSession;
  screen: WallScreen | undefined;
}) {
  const { t } = useTranslation();
  const raised = session.help !== null && session.help.acknowledgedBy === null;
  return (
    <Link
      to={paths.session.to(session.sessionId)}
      className={raised ? "wall-tile wall-tile-raised" : "wall-tile"}
      data-testid="wall-tile"
      data-session={session.sessionId}
      aria-label={t("wall.observe", { student: session.owner })}
    >
      <div className="wall-tile-head">
        <span className="wall-tile-owner" translate="no">
          {session.owner}
        </span>
        <StatusBadge status={session.status} />
        <TimeLeft until={session.expiresAt} />
        {session.score !== null && <span className="muted">{t("wall.score", { score: session.score })}</span>}
        <HandBadge help={session.help} />
      </div>
      <pre className="wall-screen" translate="no" data-testid="wall-screen">
        {screen && <WallScreenText rows={screen.rows} />}
      </pre>
      {session.help?.note && <p className="wall-note">{session.help.note}</p>}
    </Link>
  );
});
