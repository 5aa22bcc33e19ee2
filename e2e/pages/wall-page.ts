import type { Locator, Page } from "@playwright/test";

/** The class wall: one lab's sessions as live miniatures of their consoles. */
export class WallPage {
  readonly state;
  readonly tiles;

  constructor(readonly page: Page) {
    this.state = page.getByTestId("wall-state");
    this.tiles = page.getByTestId("wall-tile");
  }

  async goto(labId: string): Promise<void> {
    await this.page.goto(`/labs/${encodeURIComponent(labId)}/wall`);
  }

  /** Plays the tab being hidden or shown again (Page Visibility), as switching tabs would. */
  async setVisibility(state: "hidden" | "visible"): Promise<void> {
    await this.page.evaluate((next) => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => next });
      document.dispatchEvent(new Event("visibilitychange"));
    }, state);
  }

  tileOf(sessionId: string): Locator {
    return this.page.locator(`[data-testid="wall-tile"][data-session="${sessionId}"]`);
  }

  screenOf(sessionId: string): Locator {
    return this.tileOf(sessionId).getByTestId("wall-screen");
  }
}
