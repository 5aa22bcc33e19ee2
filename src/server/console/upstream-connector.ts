// Opening one VM's console line, and opening it again after it drops. Each attempt asks the session
// first: connect when the VMI runs, keep asking (for a bounded time) while the VM starts, back off
// and retry when the console does not answer, and end the console once the session is over.
// KubeVirt refuses with the same codes before, during and after a session, so a refusal is judged
// by asking the session again.
import type { FastifyBaseLogger } from "fastify";
import type { Session } from "../../common/api.ts";
import { KubeStatusError } from "../kube/errors.ts";
import type { ConsoleLimits } from "./limits.ts";
import { notices, type Notice } from "./notices.ts";
import { verdictFor, type ConsoleVerdict } from "./session-verdict.ts";
import { UpstreamRefusedError, type UpstreamLine } from "./upstream.ts";

/**
 * Opens the line a console shows: rejects like ConsoleConnector (kube/console-stream.ts), or with
 * UpstreamRefusedError when the line itself says why.
 */
export type OpenUpstream = (sessionId: string, signal: AbortSignal) => Promise<UpstreamLine>;

export interface UpstreamConnectorDeps {
  sessionId: string;
  connect: OpenUpstream;
  /** The session as the BFF's reads see it; undefined when it does not exist; throws when they cannot tell. */
  findSession(id: string): Promise<Session | undefined>;
  limits: Pick<
    ConsoleLimits,
    "notRunningTimeoutMs" | "notRunningRetryMs" | "reconnectInitialMs" | "reconnectMaxMs"
  >;
  log: FastifyBaseLogger;
}

export interface UpstreamConnectorEvents {
  /** A line to the VM's console is open; `reconnected` for every one after the first. */
  opened(line: UpstreamLine, reconnected: boolean): void;
  /** No line yet: what the viewers are told while the next attempt is scheduled. */
  waiting(state: "connecting" | "reconnecting", notice: Notice): void;
  /** The session is over, or its VM never started: the console ends, telling its viewers why. */
  ended(notice: Notice): void;
}

/** The session's verdict, or "unknown" while the BFF's reads cannot tell (the cluster is unreachable). */
export type SessionVerdict = ConsoleVerdict | { kind: "unknown" };

type Attempt =
  | { kind: "open"; line: UpstreamLine }
  | { kind: "ended"; notice: Notice }
  | { kind: "wait-for-start"; notice: Notice }
  | { kind: "retry"; notice: Notice }
  | { kind: "aborted" };

// A connection that lived this long was healthy: the next drop starts the backoff over.
const healthyConnectionMs = 5_000;

export class UpstreamConnector {
  private attempt: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private everConnected = false;
  private connectedAt = 0;
  private waitingForStartSince: number | undefined;
  private reconnectDelayMs: number;

  constructor(
    private readonly deps: UpstreamConnectorDeps,
    private readonly events: UpstreamConnectorEvents,
  ) {
    this.reconnectDelayMs = deps.limits.reconnectInitialMs;
  }

  /** An attempt is under way and its outcome not in yet. */
  get attempting(): boolean {
    return this.attempt !== undefined;
  }

  /** Starts an attempt, unless one is under way or scheduled already. */
  connectIfIdle(): void {
    if (this.attempt || this.retryTimer) return;
    void this.connect();
  }

  /** The open line dropped: try again, backing off unless it had been healthy for a while. */
  reconnectAfterDrop(): void {
    if (Date.now() - this.connectedAt >= healthyConnectionMs) {
      this.reconnectDelayMs = this.deps.limits.reconnectInitialMs;
    }
    this.retryLater(notices.consoleDropped);
  }

  async judgeSession(): Promise<SessionVerdict> {
    try {
      return verdictFor(await this.deps.findSession(this.deps.sessionId));
    } catch {
      // Reads cannot tell right now (cluster unreachable): try the console itself.
      return { kind: "unknown" };
    }
  }

  /** No more attempts: a scheduled one is dropped, and a line the current one opens is cut. */
  stop(): void {
    clearTimeout(this.retryTimer);
    this.attempt?.abort();
    this.attempt = undefined;
  }

  private async connect(): Promise<void> {
    const attempt = new AbortController();
    this.attempt = attempt;
    const outcome = await this.tryConnect(attempt.signal);
    if (this.attempt !== attempt) {
      if (outcome.kind === "open") outcome.line.close();
      return;
    }
    this.attempt = undefined;
    switch (outcome.kind) {
      case "open":
        return this.open(outcome.line);
      case "ended":
        return this.events.ended(outcome.notice);
      case "wait-for-start":
        return this.waitForStart(outcome.notice);
      case "retry":
        return this.retryLater(outcome.notice);
      case "aborted":
        return;
    }
  }

  private async tryConnect(signal: AbortSignal): Promise<Attempt> {
    const before = await this.judgeSession();
    if (signal.aborted) return { kind: "aborted" };
    if (before.kind === "ended") return before;
    if (before.kind === "starting") return { kind: "wait-for-start", notice: before.notice };
    try {
      return { kind: "open", line: await this.deps.connect(this.deps.sessionId, signal) };
    } catch (error) {
      if (signal.aborted) return { kind: "aborted" };
      return this.explainFailure(error);
    }
  }

  private async explainFailure(error: unknown): Promise<Attempt> {
    const { log, sessionId } = this.deps;
    if (error instanceof UpstreamRefusedError && error.final) return { kind: "ended", notice: error.notice };
    if (error instanceof KubeStatusError && (error.statusCode === 401 || error.statusCode === 403)) {
      log.error(
        { sessionId, statusCode: error.statusCode, message: error.message },
        "cluster refused the console",
      );
      return { kind: "ended", notice: notices.clusterRefusedConsole };
    }
    // 400 (not Running), 404 (no VMI) and 409 (failed) mean different things before, during and
    // after a session: its state decides.
    const after = await this.judgeSession();
    if (after.kind === "ended") return after;
    if (after.kind === "starting") return { kind: "wait-for-start", notice: after.notice };
    if (error instanceof KubeStatusError && error.statusCode < 500) {
      return { kind: "wait-for-start", notice: notices.waitingForConsole };
    }
    log.warn({ sessionId, err: error }, "could not reach the VM's console");
    return {
      kind: "retry",
      notice: error instanceof UpstreamRefusedError ? error.notice : notices.consoleNotAnswering,
    };
  }

  private open(line: UpstreamLine): void {
    const reconnected = this.everConnected;
    this.everConnected = true;
    this.connectedAt = Date.now();
    this.waitingForStartSince = undefined;
    this.events.opened(line, reconnected);
  }

  private waitForStart(notice: Notice): void {
    const { notRunningTimeoutMs, notRunningRetryMs } = this.deps.limits;
    const now = Date.now();
    this.waitingForStartSince ??= now;
    if (now - this.waitingForStartSince > notRunningTimeoutMs) {
      const minutes = Math.round(notRunningTimeoutMs / 60_000);
      this.events.ended(notices.startTimeout(minutes));
      return;
    }
    this.events.waiting(this.everConnected ? "reconnecting" : "connecting", notice);
    this.schedule(notRunningRetryMs);
  }

  private retryLater(notice: Notice): void {
    this.events.waiting("reconnecting", notice);
    this.schedule(this.reconnectDelayMs);
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, this.deps.limits.reconnectMaxMs);
  }

  private schedule(delayMs: number): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delayMs);
  }
}
