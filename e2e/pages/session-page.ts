import type { Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";
import { endSessionOn } from "./session-card.ts";

/** A session's own page: its card (timeline, time left, End), its tasks and the rest. */
export class SessionPage {
  readonly heading;
  readonly tasks;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.heading = page.getByRole("heading", { name: t("sessions.detail.title"), level: 1 });
    this.tasks = page.getByRole("region", { name: t("labs.tasks.title"), exact: true });
  }

  card(labTitle: string) {
    return this.page.getByRole("main").getByRole("article", { name: labTitle });
  }

  /** One task of the list by its title: its points and how it is checked are in its text. */
  task(title: string) {
    return this.tasks.getByRole("listitem").filter({ hasText: title });
  }

  /** Clicks "End session" on the card and confirms in the dialog. */
  async endSession(labTitle: string): Promise<void> {
    await endSessionOn(this.card(labTitle), this.t);
  }
}
