import type { Locator, Page } from "@playwright/test";

/** Staff's grading page of one lab. */
export class GradingPage {
  readonly heading;
  readonly startButton;
  readonly progress;
  readonly results;
  readonly downloadCsv;
  readonly downloadJson;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: /^Grading: / });
    this.startButton = page.getByRole("button", { name: "Start grading" });
    this.progress = page.getByRole("progressbar", { name: "Sessions graded" });
    this.results = page.getByRole("table", { name: "Results by student" });
    this.downloadCsv = page.getByRole("link", { name: "Download CSV" });
    this.downloadJson = page.getByRole("link", { name: "Download JSON" });
  }

  /** Through the navigation, as a person gets there. */
  async open(labTitle: string): Promise<void> {
    await this.page.goto("/");
    await this.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Grading" }).click();
    // The page loads on demand: until it shows, the home page (a session card of that lab's title
    // included) is still there to click.
    await this.page.getByRole("heading", { level: 1, name: "Grading", exact: true }).waitFor();
    await this.page.getByRole("main").getByRole("link", { name: labTitle }).click();
  }

  rowFor(student: string): Locator {
    return this.results.getByRole("row").filter({ has: this.page.getByRole("rowheader", { name: student }) });
  }
}
