import type { Locator, Page } from "@playwright/test";

/** The start page: the person's sessions, then the lab catalog. */
export class HomePage {
  readonly heading;
  readonly mySessions;
  readonly catalog;
  readonly signOut;
  readonly currentUser;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "Labs", level: 1 });
    this.mySessions = page.getByRole("region", { name: "Your sessions", exact: true });
    this.catalog = page.getByRole("region", { name: "Labs", exact: true });
    this.signOut = page.getByRole("button", { name: "Sign out" });
    this.currentUser = page.getByTestId("current-user");
  }

  async goto(): Promise<void> {
    await this.page.goto("/");
  }

  launchButton(labTitle: string): Locator {
    return this.catalog.getByRole("button", { name: `Launch ${labTitle}` });
  }

  sessionCard(labTitle: string): Locator {
    return this.mySessions.getByRole("article", { name: labTitle });
  }

  timelineStep(card: Locator, step: string): Locator {
    return card
      .getByRole("list", { name: "Start-up progress" })
      .getByRole("listitem")
      .filter({ hasText: step });
  }

  /** Clicks "End session" on the lab's card and confirms in the dialog. */
  async endSession(labTitle: string): Promise<void> {
    await this.sessionCard(labTitle).getByRole("button", { name: "End session" }).click();
    const dialog = this.page.getByRole("dialog", { name: "End this session?" });
    await dialog.getByRole("button", { name: "End session" }).click();
  }
}
