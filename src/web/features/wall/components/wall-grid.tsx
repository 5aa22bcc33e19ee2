// The wall's tiles: fixed-size miniatures (streaming text never moves a tile), one enlarged at a time
// to be read, and arrow keys between them.
//
// The enlarged screen lies over the grid inside its tile's link, absolutely positioned, so showing it
// moves nothing, pointing at it keeps it open (WCAG 1.4.13), and clicking it observes that session. A
// mouse opens it by resting on a tile, the keyboard by moving focus to one; a touch screen has no
// hover, so there the first tap on a tile enlarges it and a second tap observes.
//
// Tab enters the grid once (a roving tabindex: only the current tile is in the tab order); arrows,
// Home and End move between tiles, Enter observes (it is a link), Escape closes the enlarged screen.
import {
  memo,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ComponentType,
  type KeyboardEvent,
  type MouseEvent,
  type PointerEvent,
} from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { HelpRequest, SessionStatus } from "../../../../common/api.ts";
import type {
  WallDesktop,
  WallHit,
  WallMatch,
  WallScreen,
  WallSession,
} from "../../../../common/wall-protocol.ts";
import { Elapsed, TimeLeft } from "../../../components/duration.tsx";
import { paths } from "../../../lib/paths.ts";
import { screenColumns } from "../lib/cell-width.ts";
import { isGridKey, nextTile } from "../lib/grid-navigation.ts";
import { handWaits } from "../lib/wall-view.ts";
import { WallScreenText } from "./wall-screen-text.tsx";

/** Resting the mouse this long on a tile enlarges it; passing over tiles does not. */
const hoverDelayMs = 250;

type Opened = { sessionId: string; by: "hover" | "focus" | "tap" };

export interface WallBadges {
  /** The session's status, from the sessions feature. */
  StatusBadge: ComponentType<{ status: SessionStatus }>;
  /** A raised hand, from the help feature. */
  HandBadge: ComponentType<{ help: HelpRequest | null }>;
}

export function WallGrid({
  sessions,
  screens,
  desktops,
  matches,
  isIdle,
  selfCheckMaxScore,
  label,
  StatusBadge,
  HandBadge,
}: {
  /** In the order to show them. */
  sessions: readonly WallSession[];
  screens: ReadonlyMap<string, WallScreen>;
  /** Graphical sessions' screens in miniature, shown instead of their console's text. */
  desktops: ReadonlyMap<string, WallDesktop>;
  /** The current search's matches by session; undefined without a search. */
  matches: ReadonlyMap<string, WallMatch> | undefined;
  isIdle: (session: WallSession) => boolean;
  /** The points a self-check of the lab can earn; undefined until the lab is known. */
  selfCheckMaxScore: number | undefined;
  label: string;
} & WallBadges) {
  const listRef = useRef<HTMLUListElement>(null);
  const [current, setCurrent] = useState<string | null>(null);
  const [opened, setOpened] = useState<Opened | null>(null);
  // The handlers read what is open from here: a click must decide at once whether to follow its link.
  const openedRef = useRef<Opened | null>(null);
  const hoverTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const lastPointer = useRef("mouse");
  // The tile in the tab order: the one last focused while it is on the wall, else the first.
  const currentId = sessions.some((session) => session.sessionId === current)
    ? current
    : (sessions[0]?.sessionId ?? null);

  const open = useCallback((next: Opened | null) => {
    openedRef.current = next;
    setOpened(next);
  }, []);

  useEffect(() => () => clearTimeout(hoverTimer.current), []);

  // A tap elsewhere closes what a tap opened.
  useEffect(() => {
    if (opened?.by !== "tap") return;
    const closeOutside = (event: globalThis.PointerEvent) => {
      const tile = event.target instanceof Element ? event.target.closest("[data-session]") : null;
      if (tile?.getAttribute("data-session") !== opened.sessionId) open(null);
    };
    document.addEventListener("pointerdown", closeOutside);
    return () => document.removeEventListener("pointerdown", closeOutside);
  }, [opened, open]);

  // One object for every tile and every render, so the tiles' memo holds.
  const handlers = useMemo<TileHandlers>(() => {
    const isOpen = (sessionId: string, by?: Opened["by"]) =>
      openedRef.current?.sessionId === sessionId && (by === undefined || openedRef.current.by === by);
    return {
      pointerDown: (event) => {
        lastPointer.current = event.pointerType;
      },
      pointerEnter: (sessionId, event) => {
        if (event.pointerType === "touch") return;
        clearTimeout(hoverTimer.current);
        hoverTimer.current = setTimeout(() => open({ sessionId, by: "hover" }), hoverDelayMs);
      },
      pointerLeave: (sessionId, event) => {
        if (event.pointerType === "touch") return;
        clearTimeout(hoverTimer.current);
        if (isOpen(sessionId, "hover")) open(null);
      },
      focus: (sessionId, visible) => {
        setCurrent(sessionId);
        // Only a keyboard's focus enlarges: a click's would open what the click is about to leave.
        if (!visible) return;
        // A screen enlarged under a resting mouse starts a hover of its own tile; the keyboard has
        // moved on since, and its tile must not be swapped for that one when the hover's delay ends.
        clearTimeout(hoverTimer.current);
        open({ sessionId, by: "focus" });
      },
      blur: (sessionId) => {
        if (isOpen(sessionId, "focus")) open(null);
      },
      click: (sessionId, event) => {
        const touched = lastPointer.current === "touch";
        lastPointer.current = "mouse";
        if (!touched || isOpen(sessionId)) return;
        event.preventDefault();
        open({ sessionId, by: "tap" });
      },
    };
  }, [open]);

  const onKeyDown = (event: KeyboardEvent<HTMLUListElement>) => {
    if (event.key === "Escape") {
      open(null);
      return;
    }
    if (!isGridKey(event.key) || event.altKey || event.metaKey || event.shiftKey) return;
    const list = listRef.current;
    const from = (event.target as Element).closest("[data-session]")?.getAttribute("data-session");
    const index = sessions.findIndex((session) => session.sessionId === from);
    if (!list || index < 0) return;
    event.preventDefault();
    const columns = getComputedStyle(list).gridTemplateColumns.split(" ").filter(Boolean).length;
    const next = sessions[nextTile(index, event.key, sessions.length, columns)];
    if (!next) return;
    list.querySelector<HTMLElement>(`[data-session="${CSS.escape(next.sessionId)}"]`)?.focus();
  };

  return (
    <ul className="wall-grid" aria-label={label} ref={listRef} onKeyDown={onKeyDown}>
      {sessions.map((session) => (
        <li key={session.sessionId} className="wall-cell">
          <WallTile
            session={session}
            screen={screens.get(session.sessionId)}
            desktop={desktops.get(session.sessionId)}
            match={matches?.get(session.sessionId)}
            idle={isIdle(session)}
            selfCheckMaxScore={selfCheckMaxScore}
            inTabOrder={session.sessionId === currentId}
            enlarged={opened?.sessionId === session.sessionId ? opened.by : undefined}
            handlers={handlers}
            StatusBadge={StatusBadge}
            HandBadge={HandBadge}
          />
        </li>
      ))}
    </ul>
  );
}

interface TileHandlers {
  pointerDown(event: PointerEvent): void;
  pointerEnter(sessionId: string, event: PointerEvent): void;
  pointerLeave(sessionId: string, event: PointerEvent): void;
  focus(sessionId: string, visible: boolean): void;
  blur(sessionId: string): void;
  click(sessionId: string, event: MouseEvent): void;
}

const noHits: readonly WallHit[] = [];

/** Re-renders only when its own props changed: its session, screen and match keep their objects otherwise. */
const WallTile = memo(function WallTile({
  session,
  screen,
  desktop,
  match,
  idle,
  selfCheckMaxScore,
  inTabOrder,
  enlarged,
  handlers,
  StatusBadge,
  HandBadge,
}: {
  session: WallSession;
  screen: WallScreen | undefined;
  desktop: WallDesktop | undefined;
  match: WallMatch | undefined;
  idle: boolean;
  selfCheckMaxScore: number | undefined;
  inTabOrder: boolean;
  enlarged: Opened["by"] | undefined;
  handlers: TileHandlers;
} & WallBadges) {
  const { t } = useTranslation();
  const detailsId = useId();
  const { sessionId } = session;
  const raised = handWaits(session);
  const hits = match?.hits ?? noHits;
  const scrollbackOnly = match !== undefined && match.hits.length === 0 && match.scrollbackHits > 0;
  return (
    <Link
      to={paths.session.to(sessionId)}
      className={raised ? "wall-tile wall-tile-raised" : "wall-tile"}
      data-testid="wall-tile"
      data-session={sessionId}
      data-match={match ? (scrollbackOnly ? "scrollback" : "screen") : undefined}
      data-enlarged={enlarged}
      tabIndex={inTabOrder ? 0 : -1}
      aria-label={t("wall.observe", { student: session.owner })}
      aria-describedby={detailsId}
      onPointerDown={handlers.pointerDown}
      onPointerEnter={(event) => handlers.pointerEnter(sessionId, event)}
      onPointerLeave={(event) => handlers.pointerLeave(sessionId, event)}
      onFocus={(event) => handlers.focus(sessionId, event.currentTarget.matches(":focus-visible"))}
      onBlur={() => handlers.blur(sessionId)}
      onClick={(event) => handlers.click(sessionId, event)}
    >
      <div className="wall-tile-head">
        <span className="wall-tile-owner" translate="no">
          {session.owner}
        </span>
        <StatusBadge status={session.status} />
        <TimeLeft until={session.expiresAt} />
      </div>
      <div className="wall-tile-details" id={detailsId}>
        {match && (
          <span className="wall-badge wall-badge-match" data-testid="wall-match">
            {scrollbackOnly
              ? t("wall.match.scrollbackOnly", { count: match.scrollbackHits })
              : match.scrollbackHits > 0
                ? t("wall.match.alsoScrollback", { count: match.scrollbackHits })
                : t("wall.match.onScreen")}
          </span>
        )}
        <HandBadge help={session.help} />
        {idle && (
          <span className="wall-badge wall-badge-idle" data-testid="wall-idle">
            {t("wall.idle")}
            {session.lastInputAt && (
              <>
                {" "}
                <Elapsed since={session.lastInputAt} format="coarse" />
              </>
            )}
          </span>
        )}
        {session.score !== null && (
          <span className="muted">
            {selfCheckMaxScore === undefined
              ? t("wall.score", { score: session.score })
              : t("wall.scoreOf", { score: session.score, count: selfCheckMaxScore })}
          </span>
        )}
        {session.section !== null && (
          <span className="muted" translate="no">
            {session.section}
          </span>
        )}
      </div>
      {desktop ? (
        <img
          className="wall-desktop"
          data-testid="wall-desktop"
          src={`data:image/png;base64,${desktop.png}`}
          width={desktop.width}
          height={desktop.height}
          alt={t("wall.desktopOf", { student: session.owner })}
        />
      ) : (
        <pre className="wall-screen" translate="no" data-testid="wall-screen">
          {screen && screen.rows.some((row) => row !== "") ? (
            <WallScreenText rows={screen.rows} hits={hits} />
          ) : (
            // A dark tile says nothing: the VM has printed nothing yet (it is still booting).
            <span className="wall-screen-blank">{t("wall.blankScreen")}</span>
          )}
        </pre>
      )}
      <p className="wall-note">{session.help?.note}</p>
      {enlarged && <WallEnlarged session={session} screen={screen} hits={hits} tapped={enlarged === "tap"} />}
    </Link>
  );
});

// The enlarged screen's text size: readable, and never so large that a wide screen leaves the grid.
const enlargedFontPx = { min: 8, max: 14 };
/** A monospace glyph's width and a line's height, in ems, near enough for every font the wall uses. */
const glyphEm = 0.6;
const lineEm = 1.25;

/**
 * The screen large enough to read, over its tile and centred on it as far as the grid allows. It
 * sizes its text to fit the grid and the window, then places itself, before the browser paints it.
 * Hidden from screen readers: the miniature's text is already there, as text.
 */
function WallEnlarged({
  session,
  screen,
  hits,
  tapped,
}: {
  session: WallSession;
  screen: WallScreen | undefined;
  hits: readonly WallHit[];
  tapped: boolean;
}) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  const rows = screen?.rows;

  useLayoutEffect(() => {
    const overlay = ref.current;
    const tile = overlay?.parentElement;
    const grid = tile?.closest(".wall-grid");
    if (!overlay || !tile || !grid) return;
    const area = grid.getBoundingClientRect();
    const own = tile.getBoundingClientRect();
    const columns = Math.max(80, screenColumns(rows ?? []));
    const lines = Math.max(24, rows?.length ?? 0);
    const frame = 40; // the overlay's padding, border and head, in pixels: near enough
    const byWidth = (area.width - frame) / (columns * glyphEm);
    const byHeight = (window.innerHeight * 0.8 - frame) / (lines * lineEm);
    const font = Math.max(enlargedFontPx.min, Math.min(enlargedFontPx.max, byWidth, byHeight));
    overlay.style.setProperty("--wall-enlarged-font", `${font}px`);
    overlay.style.setProperty("--wall-enlarged-columns", String(columns));
    overlay.style.setProperty("--wall-enlarged-lines", String(lines));
    // Centred on the tile, then pulled inside the grid's width.
    const width = overlay.offsetWidth;
    const height = overlay.offsetHeight;
    const left = clamp(own.left + own.width / 2 - width / 2, area.left, area.right - width);
    // Within the window first: to be read it must be seen, even if it covers the toolbar meanwhile.
    const top = clamp(own.top + own.height / 2 - height / 2, 0, window.innerHeight - height);
    overlay.style.left = `${left - own.left - tile.clientLeft}px`;
    overlay.style.top = `${top - own.top - tile.clientTop}px`;
  }, [rows]);

  return (
    <div className="wall-enlarged" ref={ref} aria-hidden="true" data-testid="wall-enlarged">
      <div className="wall-enlarged-head">
        <span className="wall-tile-owner" translate="no">
          {session.owner}
        </span>
        {tapped && <span className="muted">{t("wall.tapAgain")}</span>}
      </div>
      <pre className="wall-enlarged-screen" translate="no">
        {rows && <WallScreenText rows={rows} hits={hits} />}
      </pre>
      {session.help?.note && <p className="wall-enlarged-note">{session.help.note}</p>}
    </div>
  );
}

/** `value` within `low` and `high`; `low` when they leave no room. */
function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(value, high));
}
