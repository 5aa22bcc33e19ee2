import type { CDPSession, Page } from "@playwright/test";

/**
 * An input method as Chromium's own IME bridge drives it, over the DevTools protocol: what a person
 * typing Japanese or Chinese on a desktop makes the page see. `Input.imeSetComposition` fires
 * compositionstart/compositionupdate with the text under conversion, `Input.insertText` commits it
 * (compositionend), or, with no composition open, inserts text as the IME's commit of one character.
 * Every key the IME takes for itself arrives as keydown 229 ("Process"), as on Linux with IBus or
 * Fcitx, on Windows and on macOS.
 *
 * After each commit the next key waits until the page has run a task: xterm.js sends a finished
 * composition a task after compositionend, and a key that overtakes that send loses the composition
 * (xterm.js cancels it). A person's next key comes that late anyway; the DevTools protocol's can
 * come sooner when the renderer is short of CPU, since the renderer runs queued input before timers.
 */
export class ImeKeyboard {
  private constructor(
    private readonly page: Page,
    private readonly cdp: CDPSession,
  ) {}

  static async of(page: Page): Promise<ImeKeyboard> {
    return new ImeKeyboard(page, await page.context().newCDPSession(page));
  }

  /**
   * Types `keys` (romaji or pinyin), the IME showing `steps[i]` after the i-th key and the candidate
   * last, then commits `text` with Enter, as a person confirms a conversion.
   */
  async compose(steps: readonly string[], text: string): Promise<void> {
    for (const step of steps) {
      await this.processKey("KeyA", () =>
        this.cdp.send("Input.imeSetComposition", {
          text: step,
          selectionStart: step.length,
          selectionEnd: step.length,
        }),
      );
    }
    await this.processKey("Enter", () => this.cdp.send("Input.insertText", { text }));
    await this.pageTaskRan();
  }

  /**
   * A character the IME commits at once, without a composition, once the key is up: full-width
   * punctuation (「，」「。」) from a Chinese or Japanese IME, which commits on the key's release.
   */
  async punctuation(code: string, text: string): Promise<void> {
    await this.processKey(code, async () => {});
    await this.cdp.send("Input.insertText", { text });
    await this.pageTaskRan();
  }

  /** Text that arrives with no key at all: the emoji picker, dictation, a handwriting pad. */
  async insert(text: string): Promise<void> {
    await this.cdp.send("Input.insertText", { text });
    await this.pageTaskRan();
  }

  /** Timers of the same delay run in order, so this one runs after those the commit scheduled. */
  private async pageTaskRan(): Promise<void> {
    await this.page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
  }

  private async processKey(code: string, whileDown: () => Promise<unknown>): Promise<void> {
    const key = { key: "Process", code, windowsVirtualKeyCode: 229, nativeVirtualKeyCode: 229 };
    await this.cdp.send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...key });
    await whileDown();
    await this.cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...key });
  }
}
