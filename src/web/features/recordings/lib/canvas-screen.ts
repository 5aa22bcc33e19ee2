// A screen recording's frames drawn on a canvas. PNGs decode asynchronously, so frames are drawn
// one after another in their order; a fresh start (a seek) drops whatever an older one still had
// queued. A keyframe sets the canvas's size: the screen's size may change within a recording.
import type { ScreenFrame } from "../../../../common/screen-recording.ts";
import type { ScreenSink } from "./screen-player.ts";

export class CanvasScreen implements ScreenSink {
  private queue: Promise<void> = Promise.resolve();
  private generation = 0;

  constructor(private readonly canvas: HTMLCanvasElement) {}

  draw(frames: readonly ScreenFrame[], fresh: boolean): void {
    if (fresh) {
      this.generation += 1;
      this.queue = Promise.resolve();
    }
    const generation = this.generation;
    const decoded = frames.map((frame) => decode(frame.png));
    this.queue = this.queue.then(async () => {
      for (const [index, frame] of frames.entries()) {
        const image = await decoded[index]!.catch(() => undefined);
        if (generation !== this.generation) {
          image?.close();
          return;
        }
        const context = this.canvas.getContext("2d");
        if (!image || !context) continue;
        if (frame.keyframe && (this.canvas.width !== frame.width || this.canvas.height !== frame.height)) {
          this.canvas.width = frame.width;
          this.canvas.height = frame.height;
        }
        context.drawImage(image, frame.x, frame.y);
        image.close();
      }
      // Before the first keyframe nothing was recorded yet: a blank screen.
      if (fresh && frames.length === 0) {
        this.canvas.getContext("2d")?.clearRect(0, 0, this.canvas.width, this.canvas.height);
      }
    });
  }
}

function decode(base64: string): Promise<ImageBitmap> {
  const bytes = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
  return createImageBitmap(new Blob([bytes], { type: "image/png" }));
}
