// The fits of one console's guest: each asks the VM's agent to size the terminal (guest-size.ts).
// A resize re-flows the screen copy's whole scrollback (milliseconds of the event loop every user
// shares), and each fit is a request to the VM's agent: at most one per interval, one at a time, the
// latest size asked for wins.
//
// Until the agent has answered once (a console opened while the VM boots asks before the agent
// runs, and asks again until it does), a fit first checks that the agent answers, by setting the size
// the guest already has (no SIGWINCH: the kernel signals only a change). Only then do the screen
// copy and the viewers change size: a fit that would fail leaves every screen as it was.
import type { FastifyBaseLogger } from "fastify";
import type { GuestSizeOutcome, GuestSize, SetGuestSize } from "./guest-size.ts";
import type { ConsoleLimits } from "./limits.ts";

export interface GuestFitsDeps<Asker> {
  sessionId: string;
  limits: Pick<ConsoleLimits, "initialCols" | "initialRows" | "fitIntervalMs" | "fitTimeoutMs">;
  setGuestSize: SetGuestSize;
  log: FastifyBaseLogger;
  /**
   * Sizes the screen copy and the viewers' terminals; called before the agent is asked (the guest's
   * redraw at the new size may come before its answer), and again to undo a failed fit.
   */
  resizeScreen(size: GuestSize): void;
  failed(asker: Asker, outcome: Extract<GuestSizeOutcome, { ok: false }>, size: GuestSize): void;
}

export class GuestFits<Asker> {
  private current: GuestSize;
  /** The latest size asked for, and who asked (told if it fails). */
  private pending: { size: GuestSize; asker: Asker } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private lastFitAt = -Infinity;
  /** The agent answered the last time it was asked; until then, fits check first. */
  private agentAnswers = false;
  private readonly stopped = new AbortController();

  constructor(private readonly deps: GuestFitsDeps<Asker>) {
    this.current = { cols: deps.limits.initialCols, rows: deps.limits.initialRows };
  }

  /** The size the guest was last told. */
  get size(): GuestSize {
    return this.current;
  }

  request(size: GuestSize, asker: Asker): void {
    this.pending = { size, asker };
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.stopped.abort();
  }

  private schedule(): void {
    if (!this.pending || this.timer || this.inFlight || this.stopped.signal.aborted) return;
    const waitMs = this.lastFitAt + this.deps.limits.fitIntervalMs - performance.now();
    if (waitMs <= 0) {
      void this.apply();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.apply();
    }, waitMs);
  }

  private async apply(): Promise<void> {
    const fit = this.pending;
    this.pending = undefined;
    if (!fit) return;
    const { size, asker } = fit;
    const previous = this.current;
    if (size.cols === previous.cols && size.rows === previous.rows) return;
    this.lastFitAt = performance.now();
    this.inFlight = true;
    const check = this.agentAnswers ? { ok: true as const } : await this.setGuestSize(previous);
    let outcome = check;
    if (check.ok && !this.stopped.signal.aborted) {
      // The screen copy and the viewers first: the guest redraws at the new size as soon as the
      // agent has set it, which may reach us before the agent's answer does.
      this.deps.resizeScreen(size);
      this.current = size;
      outcome = await this.setGuestSize(size);
      if (!outcome.ok && !this.stopped.signal.aborted) {
        this.deps.resizeScreen(previous);
        this.current = previous;
      }
    }
    this.inFlight = false;
    if (this.stopped.signal.aborted) return;
    this.agentAnswers = outcome.ok || outcome.failure !== "agent-unreachable";
    if (!outcome.ok) {
      this.deps.log.info(
        { sessionId: this.deps.sessionId, failure: outcome.failure, reason: outcome.reason },
        "console fit failed",
      );
      this.deps.failed(asker, outcome, size);
    }
    this.schedule();
  }

  private setGuestSize(size: GuestSize) {
    return this.deps.setGuestSize(this.deps.sessionId, size, {
      signal: this.stopped.signal,
      timeoutMs: this.deps.limits.fitTimeoutMs,
    });
  }
}
