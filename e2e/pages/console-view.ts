import { expect, type Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";

/** The console on a session page (or one of its lab's terminals): its status, controls and rows. */
export class ConsoleView {
  readonly region;
  /** Its tab, where the lab offers terminals besides the serial console. */
  readonly tab;
  /** The terminal's text as xterm.js renders it. */
  readonly rows;
  readonly takeKeyboard;
  readonly giveBackKeyboard;
  /** Who has the console open, one item per person. */
  readonly viewers;
  /** The live region that says when staff take or give back the keyboard. */
  readonly keyboardNews;
  /** The size the guest was last fitted to, "COLS×ROWS". */
  readonly guestSize;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
    readonly terminal?: number,
  ) {
    const name =
      terminal === undefined ? t("console.title") : t("console.tabs.terminal", { number: terminal });
    this.region = page.getByRole("region", { name, exact: true });
    this.tab = page.getByRole("tab", {
      name: terminal === undefined ? t("console.tabs.serial") : name,
      exact: true,
    });
    this.rows = this.region.locator(".xterm-rows");
    this.takeKeyboard = this.region.getByRole("button", { name: t("console.keyboard.take") });
    this.giveBackKeyboard = this.region.getByRole("button", { name: t("console.keyboard.giveBack") });
    this.viewers = this.region.getByRole("list", { name: t("console.viewers.label") });
    this.keyboardNews = this.region.getByTestId("console-keyboard-news");
    this.guestSize = this.region.getByLabel(t("console.guestSize"));
  }

  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${encodeURIComponent(sessionId)}`);
    if (this.terminal !== undefined) await this.tab.click();
    await this.lookAt();
  }

  async reload(): Promise<void> {
    await this.page.reload();
    await this.lookAt();
  }

  /** Waits until the guest has been fitted to fewer than `columns` columns; its size then. */
  async fittedNarrowerThan(columns: number): Promise<{ cols: string; rows: string }> {
    await expect
      .poll(async () => Number((await this.guestSize.textContent())?.split("×")[0]), { timeout: 15_000 })
      .toBeLessThan(columns);
    const [cols = "", rows = ""] = ((await this.guestSize.textContent()) ?? "").split("×");
    return { cols, rows };
  }

  /** The guest's size as the toolbar says it, once the guest has one: "COLS×ROWS". */
  async shownGuestSize(): Promise<{ cols: number; rows: number }> {
    const [cols = 0, rows = 0] = ((await this.guestSize.textContent()) ?? "").split("×").map(Number);
    return { cols, rows };
  }

  /**
   * Waits until the terminal fits its box, as the keyboard holder's window settles after a text size
   * or window change: until the guest has been fitted, the terminal keeps the guest's old size.
   */
  async fitsItsBox(): Promise<void> {
    const screen = this.region.getByTestId("console-screen");
    await expect
      .poll(() =>
        screen.evaluate(
          (box) => box.scrollHeight <= box.clientHeight + 1 && box.scrollWidth <= box.clientWidth + 1,
        ),
      )
      .toBe(true);
  }

  /** The screen's rows once the shell is back at its prompt: nothing more is coming. */
  async screenAtPrompt(): Promise<string[]> {
    await expect
      .poll(async () => (await this.screenLines()).filter((line) => line !== "").at(-1))
      .toMatch(/\$$/);
    return this.screenLines();
  }

  /** The screen's rows as a person reads them, trailing blanks left out. */
  async screenLines(): Promise<string[]> {
    return this.rows.evaluate((rows) => [...rows.children].map((row) => (row.textContent ?? "").trimEnd()));
  }

  /** Types a line into the terminal as a person would (clicking it first to focus it). */
  async typeLine(text: string): Promise<void> {
    await this.region.getByTestId("console-screen").click();
    await this.page.keyboard.type(text);
    await this.page.keyboard.press("Enter");
  }

  /**
   * Types a command line and waits until the shell has run it. The shell works out 6*7, so the
   * marker "done-42" only shows once the command ran, never in the echo of the typed line.
   */
  async run(command: string): Promise<void> {
    await expect(this.region).toHaveAttribute("data-status", "connected");
    await expect(this.region).toContainText(this.t("console.keyboard.yours"));
    const marker = `done-${Math.random().toString(36).slice(2, 8)}`;
    await this.typeLine(`${command}; echo ${marker}-$((6*7))`);
    await expect(this.rows).toContainText(`${marker}-42`);
  }

  /**
   * Scrolls the terminal into view, as a person looks at it: xterm.js draws nothing while it is off
   * screen, and on a page that opens at its top the console can start below the fold.
   */
  private async lookAt(): Promise<void> {
    await this.region.getByTestId("console-screen").scrollIntoViewIfNeeded();
  }
}
