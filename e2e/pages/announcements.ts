import type { Locator, Page } from "@playwright/test";

/** Staff's announcement form (on the class wall) and the list of what was sent below it. */
export class AnnouncementForm {
  readonly message;
  readonly audience;
  readonly sent;

  constructor(readonly page: Page) {
    this.message = page.getByLabel("Message");
    this.audience = page.getByLabel("To", { exact: true });
    this.sent = page.getByTestId("sent-announcement");
  }

  /** `audience`: the option's label ("Section b"); the form's choice when absent. */
  async send(text: string, audience?: string): Promise<void> {
    await this.message.fill(text);
    if (audience !== undefined) await this.audience.selectOption({ label: audience });
    await this.page.getByRole("button", { name: "Send", exact: true }).click();
  }
}

/** The announcements on a student's session page. */
export class AnnouncementBanners {
  readonly all;

  constructor(readonly page: Page) {
    this.all = page.getByTestId("announcement");
  }

  withText(text: string): Locator {
    return this.all.filter({ hasText: text });
  }

  async dismiss(text: string): Promise<void> {
    await this.withText(text).getByRole("button", { name: "Dismiss" }).click();
  }
}
