// Plays a screen recording (common/screen-recording.ts) onto a screen: play, pause, speed and seek.
// Seeking draws the last keyframe before the time and the changes after it up to the time; playing
// draws each frame at its time. Pauses over 2 s play as 2 s, as the console recordings' player does.
import {
  endIndexAt,
  framesAt,
  type ScreenFrame,
  type ScreenRecording,
} from "../../../../common/screen-recording.ts";
import type { PlayerState } from "./asciicast-player.ts";

export interface ScreenSink {
  /** Draws the frames in order; `fresh`: they draw the whole screen anew (a seek), forget what is queued. */
  draw(frames: readonly ScreenFrame[], fresh: boolean): void;
}

const maxIdleSeconds = 2;

export class ScreenPlayer {
  /** The next frame to draw while playing. */
  private next = 0;
  private position = 0;
  private speed = 1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<() => void>();
  private state: PlayerState = { playing: false, position: 0, speed: 1 };

  constructor(
    private readonly recording: ScreenRecording,
    private readonly sink: ScreenSink,
  ) {}

  get snapshot(): PlayerState {
    return this.state;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  play(): void {
    if (this.timer !== undefined) return;
    if (this.next >= this.recording.frames.length) this.seek(0);
    this.scheduleNext();
    this.publish(true);
  }

  pause(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.publish(false);
  }

  setSpeed(speed: number): void {
    this.speed = speed;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.scheduleNext();
    }
    this.publish(this.timer !== undefined);
  }

  /** Shows the screen as it was `seconds` into the recording. */
  seek(seconds: number): void {
    const playing = this.timer !== undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sink.draw(framesAt(this.recording, seconds), true);
    this.next = endIndexAt(this.recording.frames, seconds);
    this.position = Math.min(Math.max(seconds, 0), this.recording.duration);
    if (playing) this.scheduleNext();
    // Sought past the last frame while playing: it stopped there.
    this.publish(this.timer !== undefined);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private scheduleNext(): void {
    const frame = this.recording.frames[this.next];
    if (!frame) {
      this.timer = undefined;
      this.publish(false);
      return;
    }
    const wait = Math.min(Math.max(0, frame.at - this.position), maxIdleSeconds) / this.speed;
    this.timer = setTimeout(() => {
      this.sink.draw([frame], frame.keyframe);
      this.position = frame.at;
      this.next += 1;
      this.scheduleNext();
      this.publish(this.timer !== undefined);
    }, wait * 1000);
  }

  private publish(playing: boolean): void {
    this.state = { playing, position: this.position, speed: this.speed };
    for (const listener of this.listeners) listener();
  }
}
