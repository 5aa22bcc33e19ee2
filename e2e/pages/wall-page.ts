import { expect, type Locator, type Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";

/** Where a tile sits on the page (not in the window: scrolling does not move it). */
export interface TileBox {
  session: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The class wall: one lab's sessions as live miniatures of their consoles, searchable and filtered. */
export class WallPage {
  readonly state;
  readonly tiles;
  readonly grid;
  readonly searchBox;
  readonly regex;
  readonly matchCase;
  /** The line that says how many screens match, or why a pattern was refused. */
  readonly searchStatus;
  readonly handFilter;
  readonly statusFilter;
  readonly sort;
  readonly clearFilters;
  /** The enlarged screen of the tile being read (hover, keyboard focus or a tap). */
  readonly enlarged;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.state = page.getByTestId("wall-state");
    this.tiles = page.getByTestId("wall-tile");
    this.grid = page.getByRole("list", { name: t("wall.label") });
    this.searchBox = page.getByRole("searchbox", { name: t("wall.search.label") });
    this.regex = page.getByRole("checkbox", { name: t("wall.search.regex") });
    this.matchCase = page.getByRole("checkbox", { name: t("wall.search.matchCase") });
    this.searchStatus = page.getByTestId("wall-search-status");
    this.handFilter = page.getByRole("checkbox", { name: t("wall.filters.hand") });
    this.statusFilter = page.getByLabel(t("wall.filters.status"), { exact: true });
    this.sort = page.getByLabel(t("wall.sort.label"), { exact: true });
    this.clearFilters = page.getByRole("button", { name: t("wall.filters.clear") });
    this.enlarged = page.getByTestId("wall-enlarged");
  }

  async goto(labId: string, view = ""): Promise<void> {
    await this.page.goto(`/labs/${encodeURIComponent(labId)}/wall${view ? `?${view}` : ""}`);
  }

  /** Plays the tab being hidden or shown again (Page Visibility), as switching tabs would. */
  async setVisibility(state: "hidden" | "visible"): Promise<void> {
    await this.page.evaluate((next) => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => next });
      document.dispatchEvent(new Event("visibilitychange"));
    }, state);
  }

  /** Types a search and waits until the BFF has answered it. */
  async search(query: string): Promise<void> {
    await this.searchBox.fill(query);
    // The wall asks the BFF once typing pauses, and keeps the search in its URL as it does.
    await expect.poll(() => new URL(this.page.url()).searchParams.get("q")).toBe(query);
    await expect(this.searchStatus).toHaveAttribute("data-search", "answered");
  }

  tileOf(sessionId: string): Locator {
    return this.page.locator(`[data-testid="wall-tile"][data-session="${sessionId}"]`);
  }

  /** A graphical session's screen in miniature, the picture in its tile. */
  desktopOf(sessionId: string): Locator {
    return this.tileOf(sessionId).getByTestId("wall-desktop");
  }

  screenOf(sessionId: string): Locator {
    return this.tileOf(sessionId).getByTestId("wall-screen");
  }

  /** The sessions of the tiles, in the wall's order. */
  async order(): Promise<string[]> {
    return this.tiles.evaluateAll((tiles) => tiles.map((tile) => tile.getAttribute("data-session") ?? ""));
  }

  /** The session of the tile with the keyboard focus, or null when focus is elsewhere. */
  async focusedSession(): Promise<string | null> {
    return this.page.evaluate(
      () =>
        document.activeElement?.closest('[data-testid="wall-tile"]')?.getAttribute("data-session") ?? null,
    );
  }

  async tileBoxes(): Promise<TileBox[]> {
    return this.tiles.evaluateAll((tiles) =>
      tiles.map((tile) => {
        const box = tile.getBoundingClientRect();
        return {
          session: tile.getAttribute("data-session") ?? "",
          x: box.x + window.scrollX,
          y: box.y + window.scrollY,
          width: box.width,
          height: box.height,
        };
      }),
    );
  }

  /** Whether the page scrolls sideways: it must not, at any size the wall supports. */
  async scrollsSideways(): Promise<boolean> {
    return this.page.evaluate(
      () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
    );
  }
}
