import { expect } from "@playwright/test";
import type { ConsoleView } from "./console-view.ts";

/**
 * Asks the guest what it received: the shell reads two lines and prints the first one's bytes in hex
 * and the second as it is. What the browser sent twice, or as anything but UTF-8, shows in the hex;
 * what arrived late (after the first Enter) shows in the second line, which the test types plainly.
 */
export class GuestInputProbe {
  constructor(private readonly console: ConsoleView) {}

  /** Starts the reading and waits until the shell is at it (6*7: the marker is never in the echo). */
  async start(): Promise<void> {
    await this.console.typeLine(
      "printf 'ready-%s\\n' $((6*7)); IFS= read -r typed; IFS= read -r after; " +
        'printf \'got[%s][%s]\\n\' "$(printf %s "$typed" | od -An -tx1 | tr -d \' \\n\')" "$after"',
    );
    await expect(this.console.rows).toContainText("ready-42");
  }

  /** Waits for the guest's answer: `typed` arrived once, byte for byte, and nothing after it. */
  async expectReceived(typed: string): Promise<void> {
    await this.console.typeLine("after");
    const hex = Buffer.from(typed, "utf8").toString("hex");
    await expect(this.console.rows).toContainText(`got[${hex}][after]`);
  }
}
