// Fits the guest to the keyboard holder's window whenever that window changes size, once it settled.
// Dragging a window's edge resizes the terminal on every animation frame; each fit makes the guest's
// full-screen program redraw and the BFF re-flow its copy of the screen (and the BFF takes at most
// four a second). 400 ms after the last change sends one fit per drag or text-size step, and is
// still soon enough to feel like it followed the window.
export const autoFitDelayMs = 400;

export class AutoFit {
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `fit` decides whether this window may fit the guest now (it holds the keyboard). */
  constructor(
    private readonly fit: () => void,
    private readonly delayMs = autoFitDelayMs,
  ) {}

  windowResized(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fit();
    }, this.delayMs);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
