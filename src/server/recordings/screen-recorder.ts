// Records a VM's screen as the screen hub updates it (console/shared-screen.ts calls update after
// every change). Changes are coalesced: the changed rectangles gather in a DirtyRegion and are
// written at most once per interval (4 a second by default), each as a PNG of the screen as it is
// then. So a recording does not hold every frame the VM drew: what showed for less than the interval
// and was drawn over may be missing, and a change's time is when it was written, up to the interval
// after it happened. A keyframe (the whole screen) comes first, on a size change, and whenever the
// writer asks for one (screen-recording-writer.ts).
import type { Area, Image } from "../../common/png.ts";
import { encodePng } from "../../common/png.ts";
import { DirtyRegion } from "../screen/dirty-region.ts";
import type { ScreenRecordingWriter } from "./screen-recording-writer.ts";

/** One screen's recorder, as the console hub uses it. */
export interface ScreenRecorder {
  /** The screen after a change, and what changed (the same object may come again, changed in place). */
  update(screen: Image, changed: readonly Area[]): void;
  /**
   * No more changes: resolves once the last are stored (or dropped), or after the close timeout with a
   * warning. Never rejects.
   */
  close(): Promise<void>;
}

export interface ScreenRecorderOptions {
  /** The least time between two writes of changes. */
  intervalMs: number;
  /** zlib's level for changes (fast, they are many) and for keyframes (small, they are kept longest). */
  changeLevel?: number;
  keyframeLevel?: number;
}

export const defaultScreenRecorderOptions: ScreenRecorderOptions = { intervalMs: 250 };

/**
 * The coalescing half of a recorder: it needs a writer to write through, which may come later (the
 * storage is asked where the recording stands first). Until then changes only gather.
 */
export class CoalescingScreenRecorder {
  private readonly dirty = new DirtyRegion();
  private writer: Pick<ScreenRecordingWriter, "needsKeyframe" | "push"> | undefined;
  private screen: Image | undefined;
  private recordedSize: { width: number; height: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastWriteMs = -Infinity;
  private closed = false;

  constructor(private readonly options: ScreenRecorderOptions = defaultScreenRecorderOptions) {}

  update(screen: Image, changed: readonly Area[]): void {
    if (this.closed) return;
    this.screen = screen;
    this.dirty.add(changed);
    this.schedule();
  }

  /** The writer is open: what gathered meanwhile is written at once. */
  attach(writer: Pick<ScreenRecordingWriter, "needsKeyframe" | "push">): void {
    if (this.closed) return;
    this.writer = writer;
    this.schedule();
  }

  /** Writes what gathered now and takes no more. */
  close(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
    this.closed = true;
  }

  private schedule(): void {
    if (this.timer || !this.writer || !this.screen) return;
    const wait = Math.max(0, this.lastWriteMs + this.options.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, wait);
  }

  private write(): void {
    const { writer, screen } = this;
    if (!writer || !screen) return;
    const now = Date.now();
    this.lastWriteMs = now;
    const { width, height } = screen;
    const changed = this.dirty.take(width, height);
    const resized = this.recordedSize?.width !== width || this.recordedSize.height !== height;
    if (!resized && changed.length === 0) return;
    if (resized || writer.needsKeyframe(now)) {
      this.keyframe(writer, screen, now);
      return;
    }
    for (const area of changed) {
      const png = encodePng(screen, area, this.options.changeLevel ?? 6);
      // Refused: the recording needs a keyframe first; the screen as it is now holds this change too.
      if (!writer.push("d", area, png, now)) {
        this.keyframe(writer, screen, now);
        return;
      }
    }
  }

  private keyframe(writer: Pick<ScreenRecordingWriter, "push">, screen: Image, now: number): void {
    const whole = { x: 0, y: 0, width: screen.width, height: screen.height };
    writer.push("k", whole, encodePng(screen, whole, this.options.keyframeLevel ?? 9), now);
    this.recordedSize = { width: screen.width, height: screen.height };
  }
}
