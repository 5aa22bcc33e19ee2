import { expect, type Page } from "@playwright/test";
import { canvasText } from "../support/canvas-text.ts";
import { translator, type Translate } from "../support/catalog.ts";

/**
 * A session's screen (its VM's graphical console, drawn by noVNC): its tab, status, controls, and the
 * text on it, read back from noVNC's canvas with the VGA font the guest's text console is drawn with.
 */
export class ScreenView {
  readonly region;
  readonly tab;
  /** noVNC's canvas: the VM's screen at its own size (720x400 in text mode), scaled by CSS. */
  readonly canvas;
  readonly takeKeyboard;
  readonly giveBackKeyboard;
  readonly viewers;
  readonly keyboardNews;
  readonly specialKeys;
  readonly pasteButton;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.region = page.getByRole("region", { name: t("screen.title"), exact: true });
    this.tab = page.getByRole("tab", { name: t("console.tabs.screen"), exact: true });
    this.canvas = this.region.getByTestId("screen-host").locator("canvas");
    this.takeKeyboard = this.region.getByRole("button", { name: t("console.keyboard.take") });
    this.giveBackKeyboard = this.region.getByRole("button", { name: t("console.keyboard.giveBack") });
    this.viewers = this.region.getByRole("list", { name: t("console.viewers.label") });
    this.keyboardNews = this.region.getByTestId("console-keyboard-news");
    this.specialKeys = this.region.getByRole("button", { name: t("screen.keys.open") });
    this.pasteButton = this.region.getByRole("button", { name: t("screen.paste.open") });
  }

  /** Opens the session's page at its screen tab, as a link to it would. */
  async goto(sessionId: string): Promise<void> {
    await this.page.goto(`/sessions/${encodeURIComponent(sessionId)}?console=screen`);
    await this.live();
  }

  /** Waits until noVNC draws the server's picture. */
  async live(): Promise<void> {
    await this.region.scrollIntoViewIfNeeded();
    await expect(this.region).toHaveAttribute("data-status", "connected");
    await expect(this.region).toHaveAttribute("data-picture", "live");
  }

  /** The screen's 25 rows of text as the canvas shows them now, trailing blanks left out. */
  text(): Promise<string[]> {
    return canvasText(this.canvas);
  }

  /** Waits until the screen shows `text` on one of its rows. */
  async shows(text: string, timeout = 15_000): Promise<void> {
    await expect
      .poll(async () => (await this.text()).join("\n"), { message: `the screen shows ${text}`, timeout })
      .toContain(text);
  }

  /** Clicks the screen (noVNC takes keys while its canvas has the focus) and types. */
  async type(text: string): Promise<void> {
    await this.canvas.click();
    await this.page.keyboard.type(text, { delay: 20 });
  }

  /** Sends one of the special keys' menu, by its label ("Ctrl+Alt+Del", "F2", ...). */
  async pressSpecialKey(label: string): Promise<void> {
    await this.specialKeys.click();
    await this.region.getByRole("button", { name: label, exact: true }).click();
  }

  /** Pastes `text` through the paste dialog and waits until the BFF says it was typed. */
  async paste(text: string): Promise<void> {
    await this.pasteButton.click();
    const dialog = this.page.getByRole("dialog", { name: this.t("screen.paste.title") });
    await dialog.getByRole("textbox", { name: this.t("screen.paste.label") }).fill(text);
    await dialog.getByRole("button", { name: this.t("screen.paste.confirm") }).click();
    await expect(dialog).toBeHidden();
    await expect(
      this.region
        .getByRole("status")
        .filter({ hasText: this.t("screen.paste.typed", { count: text.length }) }),
    ).toBeVisible();
  }
}
