import type { Locator, Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";

/** The start page: the person's sessions, then the lab catalog. */
export class HomePage {
  readonly heading;
  readonly mySessions;
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

  /** A step of the start-up timeline by KubeVirt's phase name, whatever the page's language. */
  timelineStep(card: Locator, step: string): Locator {
    return card
      .getByRole("list", { name: this.t("sessions.timeline.label") })
      .getByRole("listitem")
      .and(this.page.locator(`[data-step="${step}"]`));
  }

  /** Clicks "End session" on the lab's card and confirms in the dialog. */
  async endSession(labTitle: string): Promise<void> {
    await this.sessionCard(labTitle)
      .getByRole("button", { name: this.t("sessions.end.button") })
      .click();
    const dialog = this.page.getByRole("dialog", { name: this.t("sessions.end.confirmTitle") });
    await dialog.getByRole("button", { name: this.t("sessions.end.button") }).click();
  }
}
