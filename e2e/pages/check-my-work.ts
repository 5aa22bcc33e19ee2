import type { Locator, Page } from "@playwright/test";

/** The "Check my work" panel on a session's page. */
export class CheckMyWorkPanel {
  readonly region;
  readonly button;
  readonly latest;
  readonly earlier;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Check my work", exact: true });
    this.button = this.region.getByRole("button", { name: "Check my work" });
    this.latest = this.region.getByRole("region", { name: /^Latest check/ });
    this.earlier = this.region.getByRole("region", { name: "Earlier checks" });
  }

  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${sessionId}`);
  }

  /** One check of the latest result, by its title. */
  latestCheck(title: string): Locator {
    return this.latest.getByRole("listitem").filter({ hasText: title });
  }
}
