import type { Locator, Page } from "@playwright/test";

/** The TA and instructor view of every session. */
export class SessionsPage {
  readonly heading;
  readonly table;
  readonly counts;
  readonly labFilter;
  readonly statusFilter;
  readonly studentFilter;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "Sessions", level: 1 });
    this.table = page.getByRole("table", { name: "Sessions" });
    this.counts = page.getByRole("list", { name: "Sessions by status" });
    this.labFilter = page.getByLabel("Lab", { exact: true });
    this.statusFilter = page.getByLabel("Status", { exact: true });
    this.studentFilter = page.getByLabel("Student", { exact: true });
  }

  async goto(): Promise<void> {
    await this.page.goto("/sessions");
  }

  /** The count tile for a status label ("Running") or "Total". */
  count(label: string): Locator {
    return this.counts.getByRole("listitem").filter({ hasText: label });
  }

  rowsFor(student: string): Locator {
    return this.table.getByRole("row").filter({ has: this.page.getByRole("rowheader", { name: student }) });
  }
}
