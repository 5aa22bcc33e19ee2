// A fresh console's first screen, from the tail of the VM's serial console log (KubeVirt's
// guest-console-log container), so that a student who comes back after the console closed finds the
// last screen rather than a black one: KubeVirt's live console replays nothing.
//
// The line to the VM opens first and its output is held; then, once the log had time to catch up,
// the log's tail is read; the screen is the log, followed by the held output the log did not have
// yet (log-seam.ts). Reading the log first instead would lose whatever the guest printed between
// the read and the line opening: it is in neither.
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import type { ScreenBlankReason } from "../../common/console-protocol.ts";
import type { ConsoleLogBounds, ConsoleLogText } from "../kube/client.ts";
import type { ConsoleLimits } from "./limits.ts";
import { liveBytesAlreadyLogged, logAsTerminalOutput } from "./log-seam.ts";
import { abortable } from "../../common/abortable.ts";

export type ConsoleLogReader = (
  sessionId: string,
  bounds: ConsoleLogBounds,
  signal: AbortSignal,
) => Promise<ConsoleLogText>;

export interface SeededScreen {
  /** Written into the screen copy before any live output: the log as a terminal prints it. */
  seed: Buffer;
  /** The live output held meanwhile, less what the log already had. */
  live: Buffer;
  /** What to tell viewers if the screen shows nothing. */
  blankReason: ScreenBlankReason;
}

export interface LogSeedingDeps {
  sessionId: string;
  read: ConsoleLogReader;
  limits: Pick<
    ConsoleLimits,
    "scrollbackLines" | "initialRows" | "seedLogMaxBytes" | "seedLogSettleMs" | "seedLogTimeoutMs"
  >;
  log: FastifyBaseLogger;
}

type LogTail = { kind: "log"; log: Buffer } | { kind: "none"; reason: ScreenBlankReason };

/** One fresh console's seeding: holds the live output from the moment the line opens until `done`. */
export class LogSeeding {
  private held: Buffer[] = [];
  private heldSize = 0;
  private readonly stopped = new AbortController();

  constructor(
    private readonly deps: LogSeedingDeps,
    private readonly done: (screen: SeededScreen) => void,
  ) {
    void this.run();
  }

  get heldBytes(): number {
    return this.heldSize;
  }

  hold(chunk: Buffer): void {
    this.held.push(chunk);
    this.heldSize += chunk.length;
  }

  /** The console closed: nothing more is read, and `done` is not called. */
  cancel(): void {
    this.stopped.abort();
    this.held = [];
    this.heldSize = 0;
  }

  private async run(): Promise<void> {
    const tail = await this.readTail();
    if (this.stopped.signal.aborted) return;
    const live = Buffer.concat(this.held);
    this.held = [];
    this.heldSize = 0;
    if (tail.kind === "none") {
      this.done({ seed: Buffer.alloc(0), live, blankReason: tail.reason });
      return;
    }
    const alreadyLogged = liveBytesAlreadyLogged(tail.log, live);
    this.done({
      seed: logAsTerminalOutput(tail.log),
      live: live.subarray(alreadyLogged),
      blankReason: "quiet",
    });
  }

  /**
   * The log's last scrollback's worth of lines. The byte limit keeps the oldest bytes of a tail
   * (the pod log API cuts at the end), so a tail it cut is asked for again with fewer lines.
   */
  private async readTail(): Promise<LogTail> {
    const { limits, read, sessionId, log } = this.deps;
    try {
      await sleep(limits.seedLogSettleMs, undefined, { signal: this.stopped.signal });
      const signal = AbortSignal.any([this.stopped.signal, AbortSignal.timeout(limits.seedLogTimeoutMs)]);
      const limitBytes = limits.seedLogMaxBytes;
      for (
        let tailLines = limits.scrollbackLines + limits.initialRows;
        tailLines >= limits.initialRows;
        tailLines = Math.floor(tailLines / 4)
      ) {
        const answer = await abortable(read(sessionId, { tailLines, limitBytes }, signal), signal);
        if (answer.logging === "off") return { kind: "none", reason: "log-off" };
        const text = Buffer.from(answer.text, "utf8");
        if (text.length < limitBytes) return { kind: "log", log: text };
      }
      log.info({ sessionId }, "console log lines too long to start the screen from");
      return { kind: "none", reason: "log-unreadable" };
    } catch (error) {
      if (!this.stopped.signal.aborted) {
        log.warn({ sessionId, err: error }, "could not read the console log to start the screen from");
      }
      return { kind: "none", reason: "log-unreadable" };
    }
  }
}
