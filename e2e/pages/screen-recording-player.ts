import { expect, type Page } from "@playwright/test";
import { canvasText } from "../support/canvas-text.ts";

/** The player of one screen recording (`/recordings/:sessionId?terminal=-1`), its canvas read as text. */
export class ScreenRecordingPlayer {
  readonly region;
  readonly canvas;
  readonly playButton;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Screen recording player" });
    this.canvas = this.region.getByTestId("recording-canvas");
    this.playButton = this.region.getByRole("button", { name: "Play" });
  }

  async play(speed: "1" | "2" | "4" | "8"): Promise<void> {
    await this.region.getByRole("combobox").selectOption(speed);
    await this.playButton.click();
  }

  async seekToStart(): Promise<void> {
    await this.region.getByRole("slider").fill("0");
  }

  async text(): Promise<string> {
    return (await canvasText(this.canvas)).join("\n");
  }

  /** Waits until the canvas shows `text` on one of its rows. */
  async shows(text: string): Promise<void> {
    await expect.poll(() => this.text(), { message: `the recording shows ${text}` }).toContain(text);
  }
}
