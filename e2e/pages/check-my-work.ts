import type { Locator, Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";

/** The "Check my work" panel on a session's page. */
export class CheckMyWorkPanel {
  readonly region;
  readonly button;
  readonly latest;
  readonly earlier;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.region = page.getByRole("region", { name: t("grading.self.title"), exact: true });
    this.button = this.region.getByRole("button", { name: t("grading.self.button") });
    this.latest = this.region.getByRole("region", { name: new RegExp(`^${t("grading.self.latest")}`) });
    this.earlier = this.region.getByRole("region", { name: t("grading.self.earlier") });
  }

  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${sessionId}`);
  }

  /** One check of the latest result, by its title. */
  latestCheck(title: string): Locator {
    return this.latest.getByRole("listitem").filter({ hasText: title });
  }
}
