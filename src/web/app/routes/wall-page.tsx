// /labs/:labId/wall: the class wall, the wall feature's live stream, search and filters shown with the
// sessions feature's status badges, the help feature's raised hands, the labs feature's self-check
// points and the announcements feature's form.
import { useCallback, useMemo } from "react";
import { useTranslation } from "react-i18next";
import { useParams } from "react-router";
import type { WallSession } from "../../../common/wall-protocol.ts";
import { LangText } from "../../components/lang-text.tsx";
import { Loading } from "../../components/page-state.tsx";
import { useClockText } from "../../lib/clock.ts";
import { AnnouncementForm } from "../../features/announcements/components/announcement-form.tsx";
import { HandBadge } from "../../features/help/components/hand-badge.tsx";
import { useLabs, useLabTitles } from "../../features/labs/api/get-labs.ts";
import { StatusBadge } from "../../features/sessions/components/status-badge.tsx";
import { useWallStream } from "../../features/wall/api/use-wall-stream.ts";
import { WallGrid } from "../../features/wall/components/wall-grid.tsx";
import { WallToolbar } from "../../features/wall/components/wall-toolbar.tsx";
import { useWallView } from "../../features/wall/lib/use-wall-view.ts";
import { arrangeWall, isIdle, sectionsOf } from "../../features/wall/lib/wall-view.ts";
import "../../features/wall/wall.css";

/** The class wall: every session of one lab as a live miniature of its console, searchable. */
export function WallPage() {
  const { t } = useTranslation();
  const { labId = "" } = useParams();
  const labTitle = useLabTitles();
  const selfCheckMaxScore = useSelfCheckMaxScore(labId);
  const [view, setView] = useWallView();
  const wall = useWallStream(labId, view.search);
  const now = useCoarseNow();

  const matches =
    wall.search.kind === "answered" || wall.search.kind === "pending" ? wall.search.matches : undefined;
  const arranged = useMemo(
    () => wall.sessions && arrangeWall(wall.sessions, view, { now, selfCheckMaxScore, matches }),
    [wall.sessions, view, now, selfCheckMaxScore, matches],
  );
  const sections = useMemo(() => sectionsOf(wall.sessions ?? []), [wall.sessions]);
  const idleNow = useCallback((session: WallSession) => isIdle(session, now), [now]);

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("wall.title") })}</title>
      <h1 className="page-title">
        {t("wall.title")}: <LangText text={labTitle(labId)} />
      </h1>
      <p
        className="muted"
        data-testid="wall-state"
        data-state={wall.state}
        role={wall.state === "refused" ? "alert" : undefined}
      >
        {t(`wall.state.${wall.state}`)}
      </p>
      <AnnouncementForm labId={labId} sections={sections} />
      {!wall.sessions || !arranged ? (
        <Loading label={t("wall.loading")} />
      ) : wall.sessions.length === 0 ? (
        <p className="empty">{t("wall.empty")}</p>
      ) : (
        <>
          <WallToolbar
            view={view}
            onChange={setView}
            sections={sections}
            showScore={selfCheckMaxScore !== 0}
            search={wall.search}
            counts={{
              total: wall.sessions.length,
              shown: arranged.sessions.length,
              matching: arranged.matching,
            }}
          />
          {arranged.sessions.length === 0 ? (
            <p className="empty">{t("wall.noMatch")}</p>
          ) : (
            <WallGrid
              sessions={arranged.sessions}
              screens={wall.screens}
              desktops={wall.desktops}
              matches={matches}
              isIdle={idleNow}
              selfCheckMaxScore={selfCheckMaxScore}
              label={t("wall.label")}
              StatusBadge={StatusBadge}
              HandBadge={HandBadge}
            />
          )}
        </>
      )}
    </main>
  );
}

/** The points a self-check of the lab can earn (the wall's scores are points); undefined until known. */
function useSelfCheckMaxScore(labId: string): number | undefined {
  const { data: labs } = useLabs();
  const lab = labs?.find((each) => each.id === labId);
  return lab?.checks.reduce((sum, check) => sum + (check.selfCheck ? check.points : 0), 0);
}

/** The time to the nearest 10 s: enough for the idle rule's minutes, and the wall re-sorts no oftener. */
function useCoarseNow(): number {
  return Number(useClockText((now) => String(now - (now % 10_000))));
}
