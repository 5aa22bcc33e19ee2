import type { Page } from "@playwright/test";

/** The console on a session page: its status, controls and terminal rows. */
export class ConsoleView {
  readonly region;
  /** The terminal's text as xterm.js renders it. */
  readonly rows;
  readonly takeKeyboard;
  readonly giveBackKeyboard;
  /** Who has the console open, one item per person. */
  readonly viewers;
  /** The live region that says when staff take or give back the keyboard. */
  readonly keyboardNews;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Console" });
    this.rows = this.region.locator(".xterm-rows");
    this.takeKeyboard = this.region.getByRole("button", { name: "Take the keyboard" });
    this.giveBackKeyboard = this.region.getByRole("button", { name: "Give it back" });
    this.viewers = this.region.getByRole("list", { name: "Here now:" });
    this.keyboardNews = this.region.getByTestId("console-keyboard-news");
  }

  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** Types a line into the terminal as a person would (clicking it first to focus it). */
  async typeLine(text: string): Promise<void> {
    await this.region.getByTestId("console-screen").click();
    await this.page.keyboard.type(text);
    await this.page.keyboard.press("Enter");
  }
}
