// Plays an asciicast v2 recording into a terminal: play, pause, speed and seek. Seeking redraws from
// the start (output is a stream of escape sequences: only replaying it up to a point gives the
// screen at that point), which xterm.js does in one write.

export interface CastEvent {
  /** Seconds from the start of the recording. */
  at: number;
  text: string;
}

export interface Cast {
  width: number;
  height: number;
  /** Whose session and which lab, from Lab Console's header keys; absent in a file from elsewhere. */
  session?: { owner: string; labId: string };
  events: CastEvent[];
  duration: number;
}

/** Output events only; markers and input (never recorded here) are skipped. */
export function parseCast(text: string): Cast {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const header = JSON.parse(lines[0] ?? "{}") as {
    width?: number;
    height?: number;
    lab_console?: { owner?: unknown; labId?: unknown };
  };
  const { owner, labId } = header.lab_console ?? {};
  const events: CastEvent[] = [];
  for (const line of lines.slice(1)) {
    const event = JSON.parse(line) as [number, string, string];
    if (event[1] === "o") events.push({ at: event[0], text: event[2] });
  }
  return {
    width: header.width ?? 80,
    height: header.height ?? 24,
    ...(typeof owner === "string" && typeof labId === "string" ? { session: { owner, labId } } : {}),
    events,
    duration: events.at(-1)?.at ?? 0,
  };
}

export interface PlayerSink {
  write(text: string): void;
  reset(): void;
}

export interface PlayerState {
  playing: boolean;
  /** Seconds into the recording. */
  position: number;
  speed: number;
}

/** Longest pause replayed as it was: idle minutes in a recording play as this many seconds. */
const maxIdleSeconds = 2;

export class CastPlayer {
  private next = 0;
  private position = 0;
  private speed = 1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<() => void>();
  private state: PlayerState = { playing: false, position: 0, speed: 1 };

  constructor(
    private readonly cast: Cast,
    private readonly sink: PlayerSink,
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
    if (this.next >= this.cast.events.length) this.seek(0);
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
    this.sink.reset();
    const upTo = this.cast.events.findIndex((event) => event.at > seconds);
    this.next = upTo < 0 ? this.cast.events.length : upTo;
    const text = this.cast.events
      .slice(0, this.next)
      .map((event) => event.text)
      .join("");
    if (text) this.sink.write(text);
    this.position = Math.min(seconds, this.cast.duration);
    if (playing) this.scheduleNext();
    this.publish(playing);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private scheduleNext(): void {
    const event = this.cast.events[this.next];
    if (!event) {
      this.timer = undefined;
      this.publish(false);
      return;
    }
    const wait = Math.min(Math.max(0, event.at - this.position), maxIdleSeconds) / this.speed;
    this.timer = setTimeout(() => {
      this.sink.write(event.text);
      this.position = event.at;
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
