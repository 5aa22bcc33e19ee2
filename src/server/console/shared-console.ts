// One VM's console as every viewer shares it: exactly one connection to KubeVirt, one copy of the
// screen, one keyboard. It reconnects when the line drops while the VM runs, waits (bounded) while
// the VM starts, and tells viewers the session ended, with the reason, when the VM is gone.
//
// Flow control, all bounded by watermarks of unacknowledged bytes:
// - The copy of the screen parses what arrives; while its backlog is above the high watermark, the
//   VM's console is not read (the guest blocks on its serial line) until it is below the low one.
//   Only this console's socket pauses; the event loop and the other consoles carry on.
// - The owner's viewers (and whoever holds the keyboard) are held above the high watermark: output
//   to them is skipped, and once they are below the low one they get the current screen instead.
//   Pausing the VM for them would look simpler but backfires: while the BFF does not read, the
//   kernel's socket buffers between it and KubeVirt fill with megabytes, and a Ctrl-C would only
//   show after all of that has crawled through the slowest browser.
// - Observers are dropped once too far behind; they reconnect and get the screen anew.
import type { FastifyBaseLogger } from "fastify";
import type WebSocket from "ws";
import type { Session } from "../../common/api.ts";
import type {
  ConsoleClientMessage,
  ConsoleServerMessage,
  UpstreamState,
} from "../../common/console-protocol.ts";
import { KubeStatusError } from "../kube/errors.ts";
import type { ConsoleConnector } from "../kube/console-stream.ts";
import type { ConsoleRecorder } from "../recordings/recording-store.ts";
import type { ConsoleLimits } from "./limits.ts";
import { ConsoleScreen, type ScreenText } from "./screen.ts";
import { verdictFor } from "./session-verdict.ts";
import { UpstreamLink } from "./upstream.ts";
import type { ConsoleViewer, ViewerEvents, ViewerIdentity } from "./viewer.ts";

export interface SharedConsoleDeps {
  sessionId: string;
  owner: string;
  connect: ConsoleConnector;
  /** The session as the BFF's reads see it; undefined when it does not exist; throws when they cannot tell. */
  findSession(id: string): Promise<Session | undefined>;
  limits: ConsoleLimits;
  log: FastifyBaseLogger;
  /** Records the VM's output as it arrives (before any flow control: viewers may skip, it may not). */
  recorder?: ConsoleRecorder;
  /** The console is over (ended, idle, shut down): forget it. */
  onFinished(console: SharedConsole): void;
  /** The line to the VM dropped and is open again (not called for the first connection). */
  onReconnected?(): void;
  /** Staff took the keyboard from `from` (the owner, or other staff). */
  onKeyboardTaken?(by: ViewerIdentity, from: string): void;
}

type Attempt =
  | { kind: "open"; socket: WebSocket }
  | { kind: "ended"; reason: string }
  | { kind: "wait-for-start"; message: string }
  | { kind: "retry"; message: string }
  | { kind: "aborted" };

interface GuestSize {
  cols: number;
  rows: number;
}

// A connection that lived this long was healthy: the next drop starts the backoff over.
const healthyConnectionMs = 5_000;

export class SharedConsole implements ViewerEvents {
  private readonly viewers = new Set<ConsoleViewer>();
  private readonly screen: ConsoleScreen;
  private upstream: UpstreamLink | undefined;
  private attempt: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  private status: { state: UpstreamState; message: string | null } = { state: "connecting", message: null };
  private keyboardHolder: string;
  private guestSize: GuestSize;
  private pendingFit: GuestSize | undefined;
  private fitTimer: NodeJS.Timeout | undefined;
  private lastFitAt = -Infinity;
  private paused = false;
  private finished = false;
  /** Open class walls showing this console: they keep its line open without a viewer. */
  private keepers = 0;
  private everConnected = false;
  private connectedAt = 0;
  private waitingForStartSince: number | undefined;
  private reconnectDelayMs: number;

  constructor(private readonly deps: SharedConsoleDeps) {
    const { limits } = deps;
    this.screen = new ConsoleScreen(
      {
        cols: limits.initialCols,
        rows: limits.initialRows,
        scrollback: limits.scrollbackLines,
        archiveAfterMs: limits.scrollbackArchiveAfterMs,
        archiveBusyShare: limits.scrollbackArchiveBusyShare,
      },
      () => this.resumeIfCaughtUp(),
    );
    this.keyboardHolder = deps.owner;
    this.guestSize = { cols: limits.initialCols, rows: limits.initialRows };
    this.reconnectDelayMs = limits.reconnectInitialMs;
  }

  get sessionId(): string {
    return this.deps.sessionId;
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  get upstreamConnected(): boolean {
    return this.upstream !== undefined;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** Goes up whenever the screen may have changed (see ConsoleScreen.version). */
  get screenVersion(): number {
    return this.screen.version;
  }

  screenText(): ScreenText {
    return this.screen.text();
  }

  /**
   * Keeps the line to the VM (and so the screen copy) open with no viewer, for a class wall's
   * miniature; the returned function lets go. Still one connection per VMI: viewers share it.
   */
  keepOpen(): () => void {
    if (this.finished) return () => undefined;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.keepers += 1;
    if (!this.upstream && !this.attempt && !this.retryTimer) void this.connect();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.keepers -= 1;
      this.lingerIfUnused();
    };
  }

  join(viewer: ConsoleViewer): void {
    if (this.finished) {
      viewer.goAway();
      return;
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.viewers.add(viewer);
    viewer.send(this.statusMessage());
    viewer.send(this.keyboardMessage(viewer));
    viewer.send({ type: "guest-size", ...this.guestSize });
    this.replayTo(viewer, !this.screen.hasOutput);
    if (!this.upstream && !this.attempt && !this.retryTimer) void this.connect();
  }

  /** Pings the VM's console and every viewer; closes viewers whose sign-in expired. */
  heartbeat(now: number): void {
    this.upstream?.heartbeat();
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.loginExpiresAt <= now) {
        viewer.end("Your sign-in has expired. Sign in again to reopen the console.");
      } else {
        viewer.heartbeat();
      }
    }
  }

  /** Ends the console when its session is over, even if KubeVirt keeps the line open. */
  async checkSession(): Promise<void> {
    if (this.finished || this.attempt) return;
    const verdict = await this.judge();
    if (verdict.kind === "ended") this.end(verdict.reason);
  }

  /** Closes the sockets of one sign-in (it signed out). */
  endViewersOf(loginSessionId: string, reason: string): void {
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.loginSessionId === loginSessionId) viewer.end(reason);
    }
  }

  /** The BFF is going away, or nobody watched for a while: close without an "ended". */
  shutDown(): void {
    if (this.finished) return;
    this.finished = true;
    for (const viewer of [...this.viewers]) viewer.goAway();
    this.cleanUp();
  }

  // ViewerEvents

  input(viewer: ConsoleViewer, bytes: Buffer): void {
    if (this.canType(viewer)) this.upstream?.send(bytes);
  }

  control(viewer: ConsoleViewer, message: Exclude<ConsoleClientMessage, { type: "ack" }>): void {
    switch (message.type) {
      case "take-keyboard": {
        const { access, username } = viewer.identity;
        if (access === "watcher" || this.keyboardHolder === username) return;
        const from = this.keyboardHolder;
        this.giveKeyboardTo(username, "taken");
        // The owner taking their own keyboard back is not news; staff typing in a student's VM is.
        if (access === "staff") this.deps.onKeyboardTaken?.(viewer.identity, from);
        return;
      }
      case "release-keyboard":
        if (viewer.identity.access === "staff" && this.keyboardHolder === viewer.identity.username) {
          this.giveKeyboardTo(this.deps.owner, "given back");
        }
        return;
      case "fit-guest":
        if (this.canType(viewer)) this.requestFit({ cols: message.cols, rows: message.rows });
        return;
    }
  }

  acked(viewer: ConsoleViewer): void {
    if (viewer.isHeld && viewer.liveBytesBehind <= this.deps.limits.lowWatermarkBytes) {
      this.replayTo(viewer, false);
    }
  }

  closed(viewer: ConsoleViewer): void {
    if (!this.viewers.delete(viewer) || this.finished) return;
    const { username, access } = viewer.identity;
    const stillHere = [...this.viewers].some((other) => other.identity.username === username);
    if (access === "staff" && this.keyboardHolder === username && !stillHere) {
      this.giveKeyboardTo(this.deps.owner, "returned (its holder left)");
    }
    this.lingerIfUnused();
  }

  private lingerIfUnused(): void {
    if (this.finished || this.viewers.size > 0 || this.keepers > 0 || this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => this.shutDown(), this.deps.limits.lingerMs);
  }

  // Connecting

  private async connect(): Promise<void> {
    const attempt = new AbortController();
    this.attempt = attempt;
    const outcome = await this.tryConnect(attempt.signal);
    if (this.attempt !== attempt) {
      if (outcome.kind === "open") outcome.socket.terminate();
      return;
    }
    this.attempt = undefined;
    switch (outcome.kind) {
      case "open":
        return this.attach(outcome.socket);
      case "ended":
        return this.end(outcome.reason);
      case "wait-for-start":
        return this.waitForStart(outcome.message);
      case "retry":
        return this.retryLater(outcome.message);
      case "aborted":
        return;
    }
  }

  private async tryConnect(signal: AbortSignal): Promise<Attempt> {
    const before = await this.judge();
    if (signal.aborted) return { kind: "aborted" };
    if (before.kind === "ended") return before;
    if (before.kind === "starting") return { kind: "wait-for-start", message: before.message };
    try {
      return { kind: "open", socket: await this.deps.connect(this.deps.sessionId, signal) };
    } catch (error) {
      if (signal.aborted) return { kind: "aborted" };
      return this.explainFailure(error);
    }
  }

  private async explainFailure(error: unknown): Promise<Attempt> {
    const { log, sessionId } = this.deps;
    if (error instanceof KubeStatusError && (error.statusCode === 401 || error.statusCode === 403)) {
      log.error(
        { sessionId, statusCode: error.statusCode, message: error.message },
        "cluster refused the console",
      );
      return {
        kind: "ended",
        reason: "The cluster refused to open this console. An operator must check Lab Console's permissions.",
      };
    }
    // 400 (not Running), 404 (no VMI) and 409 (failed) mean different things before, during and
    // after a session: its state decides.
    const after = await this.judge();
    if (after.kind === "ended") return after;
    if (after.kind === "starting") return { kind: "wait-for-start", message: after.message };
    if (error instanceof KubeStatusError && error.statusCode < 500) {
      return { kind: "wait-for-start", message: "Waiting for the VM's console…" };
    }
    log.warn({ sessionId, err: error }, "could not reach the VM's console");
    return { kind: "retry", message: "The VM's console is not answering; retrying…" };
  }

  private async judge(): Promise<ReturnType<typeof verdictFor> | { kind: "unknown" }> {
    try {
      return verdictFor(await this.deps.findSession(this.deps.sessionId));
    } catch {
      // Reads cannot tell right now (cluster unreachable): try the console itself.
      return { kind: "unknown" };
    }
  }

  private attach(socket: WebSocket): void {
    if (this.finished) {
      socket.terminate();
      return;
    }
    this.upstream = new UpstreamLink(socket, {
      output: (chunk) => this.deliver(chunk),
      lost: (code) => this.onLost(code),
    });
    if (this.paused) this.upstream.pause();
    if (this.everConnected) this.deps.onReconnected?.();
    this.everConnected = true;
    this.connectedAt = Date.now();
    this.waitingForStartSince = undefined;
    this.setStatus("connected", null);
  }

  private onLost(code: number): void {
    this.upstream = undefined;
    this.deps.log.info({ sessionId: this.deps.sessionId, code }, "VM console connection lost");
    if (this.viewers.size === 0 && this.keepers === 0) {
      this.shutDown();
      return;
    }
    if (Date.now() - this.connectedAt >= healthyConnectionMs) {
      this.reconnectDelayMs = this.deps.limits.reconnectInitialMs;
    }
    this.retryLater("The connection to the VM's console dropped; reconnecting…");
  }

  private waitForStart(message: string): void {
    const { notRunningTimeoutMs, notRunningRetryMs } = this.deps.limits;
    const now = Date.now();
    this.waitingForStartSince ??= now;
    if (now - this.waitingForStartSince > notRunningTimeoutMs) {
      const minutes = Math.round(notRunningTimeoutMs / 60_000);
      this.end(`The VM did not start within ${minutes} minute${minutes === 1 ? "" : "s"}.`);
      return;
    }
    this.setStatus(this.everConnected ? "reconnecting" : "connecting", message);
    this.schedule(notRunningRetryMs);
  }

  private retryLater(message: string): void {
    this.setStatus("reconnecting", message);
    this.schedule(this.reconnectDelayMs);
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, this.deps.limits.reconnectMaxMs);
  }

  private schedule(delayMs: number): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delayMs);
  }

  // Output and flow control

  private deliver(chunk: Buffer): void {
    this.deps.recorder?.output(chunk);
    this.screen.write(chunk);
    const { highWatermarkBytes, observerMaxBehindBytes } = this.deps.limits;
    for (const viewer of [...this.viewers]) {
      viewer.output(chunk);
      if (this.keptInStep(viewer)) {
        if (!viewer.isHeld && !viewer.isReplaying && viewer.liveBytesBehind > highWatermarkBytes)
          viewer.hold();
      } else if (viewer.bytesBehind > observerMaxBehindBytes) {
        this.deps.log.info(
          { sessionId: this.deps.sessionId, viewer: viewer.identity.username },
          "console observer too far behind; dropped",
        );
        viewer.dropAsTooSlow();
      }
    }
    if (!this.paused && this.screen.backlogBytes > highWatermarkBytes) {
      this.paused = true;
      this.upstream?.pause();
    }
  }

  /** The screen as of now, then live output; joining viewers and held ones that caught up get it. */
  private replayTo(viewer: ConsoleViewer, fresh: boolean): void {
    viewer.beginReplay();
    void this.screen.snapshot().then((screen) => viewer.replay(screen, fresh));
  }

  /** The owner's viewers and the keyboard holder's: held rather than dropped when behind. */
  private keptInStep(viewer: ConsoleViewer): boolean {
    const { access, username } = viewer.identity;
    return access === "owner" || (access === "staff" && this.keyboardHolder === username);
  }

  private resumeIfCaughtUp(): void {
    if (!this.paused || this.finished || this.screen.backlogBytes > this.deps.limits.lowWatermarkBytes)
      return;
    this.paused = false;
    this.upstream?.resume();
  }

  // The keyboard

  private canType(viewer: ConsoleViewer): boolean {
    return viewer.identity.access !== "watcher" && viewer.identity.username === this.keyboardHolder;
  }

  private giveKeyboardTo(username: string, how: string): void {
    if (this.keyboardHolder === username) return;
    this.deps.log.info(
      { sessionId: this.deps.sessionId, from: this.keyboardHolder, to: username },
      `console keyboard ${how}`,
    );
    this.keyboardHolder = username;
    for (const viewer of this.viewers) viewer.send(this.keyboardMessage(viewer));
  }

  private keyboardMessage(viewer: ConsoleViewer): ConsoleServerMessage {
    const { access, username } = viewer.identity;
    const holds = this.keyboardHolder === username;
    return {
      type: "keyboard",
      holder: this.keyboardHolder,
      holderIsOwner: this.keyboardHolder === this.deps.owner,
      canType: this.canType(viewer),
      canTake: access !== "watcher" && !holds,
      canRelease: access === "staff" && holds,
    };
  }

  // The guest's size

  // A resize re-flows the screen copy's whole scrollback (milliseconds of the event loop every user
  // shares), and each fit types a line into the guest: at most one per interval, the latest wins.
  private requestFit(size: GuestSize): void {
    this.pendingFit = size;
    if (this.fitTimer) return;
    const waitMs = this.lastFitAt + this.deps.limits.fitIntervalMs - performance.now();
    if (waitMs <= 0) {
      this.applyFit();
      return;
    }
    this.fitTimer = setTimeout(() => {
      this.fitTimer = undefined;
      this.applyFit();
    }, waitMs);
  }

  private applyFit(): void {
    const size = this.pendingFit;
    this.pendingFit = undefined;
    if (!size || !this.upstream || this.finished) return;
    if (size.cols === this.guestSize.cols && size.rows === this.guestSize.rows) return;
    this.lastFitAt = performance.now();
    // A serial line has no window size: the shell learns it from stty, the screen copy from us.
    this.upstream.send(Buffer.from(`stty rows ${size.rows} cols ${size.cols}\r`));
    this.screen.resize(size.cols, size.rows);
    this.guestSize = size;
    this.broadcast({ type: "guest-size", ...this.guestSize });
  }

  // Status and the end

  private statusMessage(): ConsoleServerMessage {
    return { type: "status", ...this.status };
  }

  private setStatus(state: UpstreamState, message: string | null): void {
    if (this.status.state === state && this.status.message === message) return;
    this.status = { state, message };
    this.broadcast(this.statusMessage());
  }

  private broadcast(message: ConsoleServerMessage): void {
    for (const viewer of this.viewers) viewer.send(message);
  }

  private end(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.deps.log.info({ sessionId: this.deps.sessionId, reason }, "console ended");
    for (const viewer of [...this.viewers]) viewer.end(reason);
    this.cleanUp();
  }

  private cleanUp(): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.lingerTimer);
    clearTimeout(this.fitTimer);
    this.attempt?.abort();
    this.attempt = undefined;
    this.upstream?.close();
    this.upstream = undefined;
    this.viewers.clear();
    this.screen.dispose();
    this.deps.onFinished(this);
  }
}
