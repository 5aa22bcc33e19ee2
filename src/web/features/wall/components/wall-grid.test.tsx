import "../wall.css";
import { beforeEach, describe, expect, it } from "vitest";
import { page, userEvent } from "vitest/browser";
import type { WallDesktop, WallMatch, WallScreen, WallSession } from "../../../../common/wall-protocol.ts";
import { renderComponent } from "../../../testing/render-component.tsx";
import { WallGrid } from "./wall-grid.tsx";

function aWallSession(overrides: Partial<WallSession> & { sessionId: string }): WallSession {
  return {
    owner: overrides.sessionId.replace("s-", ""),
    section: null,
    status: "running",
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    help: null,
    score: null,
    lastInputAt: null,
    idle: null,
    ...overrides,
  };
}

const aScreen = (sessionId: string, rows: string[]): WallScreen => ({
  sessionId,
  rows,
  cursor: { x: 0, y: 0 },
});

const students = ["ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal"];
const sessions = students.map((name) => aWallSession({ sessionId: `s-${name}` }));

function renderWall({
  shown = sessions,
  screens = [],
  desktops = [],
  matches,
  idle = [],
  selfCheckMaxScore,
}: {
  shown?: WallSession[];
  screens?: WallScreen[];
  desktops?: WallDesktop[];
  matches?: WallMatch[];
  idle?: string[];
  selfCheckMaxScore?: number;
} = {}) {
  return renderComponent(
    <WallGrid
      sessions={shown}
      screens={new Map(screens.map((screen) => [screen.sessionId, screen]))}
      desktops={new Map(desktops.map((desktop) => [desktop.sessionId, desktop]))}
      matches={matches && new Map(matches.map((match) => [match.sessionId, match]))}
      isIdle={(session) => idle.includes(session.sessionId)}
      selfCheckMaxScore={selfCheckMaxScore}
      label="Class wall"
      StatusBadge={({ status }) => <span>{status}</span>}
      HandBadge={({ help }) => (help ? <span>Hand raised</span> : null)}
    />,
  );
}

const tile = (student: string) => page.getByRole("link", { name: `Observe ${student}'s console` });
const focused = () => document.activeElement?.getAttribute("aria-label");

beforeEach(async () => {
  // Wide enough for several columns, so up and down differ from left and right.
  await page.viewport(1100, 800);
});

describe("the wall's grid", () => {
  it("shows a tile per session with its screen, or says the screen is still blank", async () => {
    await renderWall({
      shown: sessions.slice(0, 3),
      screens: [aScreen("s-ann", ["ann@vm:~$ ls", "notes.txt"])],
      desktops: [{ sessionId: "s-cat", width: 4, height: 3, png: "iVBORw0KGgo=" }],
    });
    const tiles = page.getByRole("list", { name: "Class wall" }).getByRole("link");
    expect(tiles.elements()).toHaveLength(3);
    expect(tile("ann").getByTestId("wall-screen").element().textContent).toBe("ann@vm:~$ ls\nnotes.txt");
    await expect.element(tile("ben")).toHaveTextContent("Nothing on this screen yet.");
    await expect.element(page.getByRole("img", { name: "cat's screen" })).toBeInTheDocument();
    await expect.element(tile("ann")).toHaveAttribute("href", "/sessions/s-ann");
  });

  it("shows who is idle, who raised a hand and the self-check's score", async () => {
    await renderWall({
      shown: [
        aWallSession({ sessionId: "s-ann", score: 7 }),
        aWallSession({
          sessionId: "s-ben",
          help: { raisedAt: new Date().toISOString(), note: "stuck on step 3", acknowledgedBy: null },
        }),
      ],
      idle: ["s-ben"],
      selfCheckMaxScore: 10,
    });
    await expect.element(tile("ann")).toHaveTextContent("Self-check: 7 of 10 pts");
    expect(tile("ann").element().textContent).not.toContain("Idle");
    await expect.element(tile("ben")).toHaveTextContent("Idle");
    await expect.element(tile("ben")).toHaveTextContent("Hand raised");
    await expect.element(tile("ben")).toHaveTextContent("stuck on step 3");
  });

  it("marks the search's hits on a screen and says where a tile's matches are", async () => {
    await renderWall({
      shown: sessions.slice(0, 3),
      screens: [aScreen("s-ann", ["$ make", "error: missing ;"]), aScreen("s-ben", ["$ ls"])],
      matches: [
        { sessionId: "s-ann", hits: [{ row: 1, start: 0, end: 5 }], scrollbackHits: 0 },
        { sessionId: "s-ben", hits: [], scrollbackHits: 2 },
      ],
    });
    const marks = tile("ann").element().querySelectorAll("mark");
    expect([...marks].map((mark) => mark.textContent)).toEqual(["error"]);
    await expect.element(tile("ann")).toHaveAttribute("data-match", "screen");
    await expect.element(tile("ben")).toHaveTextContent("Off screen only: scrolled or cleared (2)");
    await expect.element(tile("ben")).toHaveAttribute("data-match", "scrollback");
    await expect.element(tile("cat")).not.toHaveAttribute("data-match");
  });

  it("is one stop in the tab order, and the focused tile's screen is enlarged until Escape", async () => {
    await renderWall({ screens: [aScreen("s-ann", ["hello from ann"])] });
    expect(sessions.map(({ owner }) => tile(owner).element().tabIndex)).toEqual([
      0, -1, -1, -1, -1, -1, -1, -1,
    ]);

    await userEvent.keyboard("{Tab}");
    expect(focused()).toBe("Observe ann's console");
    const enlarged = page.getByTestId("wall-enlarged");
    await expect.element(enlarged).toHaveTextContent("hello from ann");
    await userEvent.keyboard("{Escape}");
    await expect.element(enlarged).not.toBeInTheDocument();
  });

  it("moves between tiles with the arrow keys, Home and End, as the tiles lie in the grid", async () => {
    await renderWall();
    await userEvent.keyboard("{Tab}{ArrowRight}");
    expect(focused()).toBe("Observe ben's console");
    await expect.element(tile("ben")).toHaveAttribute("tabindex", "0");
    await expect.element(tile("ann")).toHaveAttribute("tabindex", "-1");

    const from = tile("ben").element().getBoundingClientRect();
    await userEvent.keyboard("{ArrowDown}");
    // A column down, not the next tile along.
    expect(focused()).not.toBe("Observe cat's console");
    const below = document.activeElement!.getBoundingClientRect();
    expect(below.left).toBe(from.left);
    expect(below.top).toBeGreaterThan(from.top);
    await userEvent.keyboard("{ArrowUp}");
    expect(focused()).toBe("Observe ben's console");

    await userEvent.keyboard("{End}");
    expect(focused()).toBe("Observe hal's console");
    await userEvent.keyboard("{ArrowRight}");
    expect(focused()).toBe("Observe hal's console");
    await userEvent.keyboard("{Home}");
    expect(focused()).toBe("Observe ann's console");
  });

  it("enlarges the screen the mouse rests on", async () => {
    await renderWall({ screens: [aScreen("s-cat", ["cat's prompt"])] });
    await userEvent.hover(tile("cat"));
    const enlarged = page.getByTestId("wall-enlarged");
    await expect.element(enlarged).toHaveTextContent("cat's prompt");
    await expect.element(tile("cat")).toHaveAttribute("data-enlarged", "hover");
  });
});
