// A duty's work that is one pass done again and again: the first at once, each next one an interval
// after the last ended (never two at once), none after stop(). A failed pass is logged and the next
// one tries again: the cluster away or the caches still loading must not end the duty.
import type { DutyWork } from "./coordination.ts";

export interface RepeatingWorkOptions {
  pass: () => Promise<unknown>;
  intervalMs: number;
  /**
   * Until a first pass succeeded (the caches are still loading at start-up), passes come this often
   * and their failures are not logged. Default: the interval, and every failure logged.
   */
  untilFirstSuccessMs?: number;
  log: { warn(object: object, message: string): void };
  /** Logged with the error of a failed pass. */
  failed: string;
}

export class RepeatingWork implements DutyWork {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private succeededOnce: boolean;

  constructor(private readonly options: RepeatingWorkOptions) {
    this.succeededOnce = options.untilFirstSuccessMs === undefined;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Resolves once a pass under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.passOnce().finally(() => {
        this.running = undefined;
        const { intervalMs, untilFirstSuccessMs } = this.options;
        this.schedule(
          this.succeededOnce ? intervalMs : Math.min(intervalMs, untilFirstSuccessMs ?? intervalMs),
        );
      });
    }, delayMs);
  }

  private async passOnce(): Promise<void> {
    try {
      await this.options.pass();
      this.succeededOnce = true;
    } catch (error) {
      if (this.succeededOnce) this.options.log.warn({ err: error }, this.options.failed);
    }
  }
}
