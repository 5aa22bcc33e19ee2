import { expect, type Page } from "@playwright/test";
import { translator, type Translate } from "../support/catalog.ts";

/** The console on a session page, as the student types into it. */
export class ConsoleTerminal {
  readonly region;

  constructor(
    readonly page: Page,
    readonly t: Translate = translator("en"),
  ) {
    this.region = page.getByRole("region", { name: t("console.title") });
  }

  /**
   * Types a command line and waits until the shell has run it. The shell works out 6*7, so the
   * marker "done-42" only shows once the command ran, never in the echo of the typed line.
   */
  async run(command: string): Promise<void> {
    await expect(this.region).toHaveAttribute("data-status", "connected");
    await expect(this.region).toContainText(this.t("console.keyboard.yours"));
    await this.region.getByTestId("console-screen").click();
    const marker = `done-${Math.random().toString(36).slice(2, 8)}`;
    await this.page.keyboard.type(`${command}; echo ${marker}-$((6*7))`);
    await this.page.keyboard.press("Enter");
    await expect(this.region.locator(".xterm-rows")).toContainText(`${marker}-42`);
  }
}
