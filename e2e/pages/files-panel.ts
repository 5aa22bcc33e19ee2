import type { Locator, Page } from "@playwright/test";

/** The session page's Files panel: upload into the home, download from it. */
export class FilesPanel {
  readonly region: Locator;
  readonly upload: Locator;
  readonly download: Locator;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Files" });
    this.upload = this.region.getByRole("form", { name: "Upload into the home folder" });
    this.download = this.region.getByRole("form", { name: "Download from the home folder" });
  }

  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${sessionId}`);
  }
}
