import type { Locator, Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";
import { endSessionOn } from "./session-card.ts";

/** The start page: the person's sessions, then the lab catalog. */
export class HomePage {
  readonly heading;
  readonly mySessions;
  readonly pastSessions;
  readonly catalog;
  readonly signOut;
  readonly currentUser;
  readonly language;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.heading = page.getByRole("heading", { name: t("home.title"), level: 1 });
    this.mySessions = page.getByRole("region", { name: t("sessions.mine.title"), exact: true });
    this.pastSessions = page.getByRole("region", { name: t("sessions.past.title"), exact: true });
    this.catalog = page.getByRole("region", { name: t("labs.catalog.title"), exact: true });
    this.signOut = page.getByRole("button", { name: t("auth.signOut") });
    this.currentUser = page.getByTestId("current-user");
    this.language = page.getByLabel(t("app.language"), { exact: true });
  }

  async goto(): Promise<void> {
    await this.page.goto("/");
  }

  launchButton(labTitle: string): Locator {
    return this.catalog.getByRole("button", { name: this.t("sessions.launch.label", { lab: labTitle }) });
  }

  sessionCard(labTitle: string): Locator {
    return this.mySessions.getByRole("article", { name: labTitle });
  }

  /** The newest ended session of the lab, as one row of "Past sessions". */
  pastSession(labTitle: string): Locator {
    return this.pastSessions.getByRole("listitem").filter({ hasText: labTitle }).first();
  }

  /** Clicks "End session" on the lab's card and confirms in the dialog. */
  async endSession(labTitle: string): Promise<void> {
    await endSessionOn(this.sessionCard(labTitle), this.t);
  }
}
