import type { Page } from "@playwright/test";

/** The player of one console recording (`/recordings/:sessionId`). */
export class RecordingPlayer {
  readonly region;
  /** The replayed terminal's rows. */
  readonly screen;
  readonly playButton;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Recording player" });
    this.screen = this.region.getByTestId("recording-screen").locator(".xterm-rows");
    this.playButton = this.region.getByRole("button", { name: "Play" });
  }

  /** Plays from where it stands, at `speed` times the recorded pace. */
  async play(speed: "1" | "2" | "4" | "8"): Promise<void> {
    await this.region.getByRole("combobox").selectOption(speed);
    await this.playButton.click();
  }

  async seekToStart(): Promise<void> {
    await this.region.getByRole("slider").fill("0");
  }
}
