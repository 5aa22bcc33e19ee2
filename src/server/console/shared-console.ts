// One VM's console as every viewer shares it: exactly one connection to KubeVirt, one copy of the
// screen, one keyboard. Opening and reopening the line to the VM is the connector's job
// (upstream-connector.ts), who may type the keyboard's (keyboard.ts), and setting the guest's size
// its agent's (guest-size.ts); this file keeps the viewers, tells each who else is there
// (presence.ts) and how the line is (console-status.ts), and carries the flow of output from the VM
// to them.
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
import type { Session } from "../../common/api.ts";
import type {
  ConsoleClientMessage,
  ConsoleServerMessage,
  ScreenBlankReason,
} from "../../common/console-protocol.ts";
import type { ConsoleRecorder } from "../recordings/recording-store.ts";
import { ConsoleStatus } from "./console-status.ts";
import { CurrentUpstream } from "./current-upstream.ts";
import { GuestFits } from "./guest-fits.ts";
import type { SetGuestSize } from "./guest-size.ts";
import { ConsoleKeyboard } from "./keyboard.ts";
import { screenOptions, type ConsoleLimits } from "./limits.ts";
import { LogSeeding, type ConsoleLogReader, type SeededScreen } from "./log-seeding.ts";
import { viewersMessage } from "./presence.ts";
import { ConsoleScreen, type ScreenText } from "./screen.ts";
import type { DepartedRows } from "./searchable-scrollback.ts";
import { UpstreamConnector, type OpenUpstream } from "./upstream-connector.ts";
import type { UpstreamLine } from "./upstream.ts";
import type { ConsoleViewer, ViewerEvents, ViewerIdentity } from "./viewer.ts";
import { notices, type Notice } from "./notices.ts";

export interface SharedConsoleDeps {
  sessionId: string;
  owner: string;
  connect: OpenUpstream;
  /** Sets the guest's console terminal size (through its agent); nothing is ever typed for it. */
  setGuestSize: SetGuestSize;
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
  /**
   * The VM's serial console log, to start a fresh console's screen from (log-seeding.ts); without
   * it a console starts blank, as KubeVirt's does.
   */
  readConsoleLog?: ConsoleLogReader;
  /** Someone who may type sent input to the VM (idle handling counts it as activity). */
  onInput?(): void;
  /**
   * The idle warning or pause to show in the console's status while it is connected, null when
   * there is none; asked on every session check.
   */
  idleNotice?(): Promise<Notice | null>;
}

export class SharedConsole implements ViewerEvents {
  private readonly viewers = new Set<ConsoleViewer>();
  private readonly screen: ConsoleScreen;
  private readonly connector: UpstreamConnector;
  private readonly keyboard: ConsoleKeyboard;
  private readonly upstream: CurrentUpstream;
  private lingerTimer: NodeJS.Timeout | undefined;
  private readonly status = new ConsoleStatus((message) => this.broadcast(message));
  private readonly fits: GuestFits<ConsoleViewer>;
  // The first screen: until it is settled (read from the log, or known to be blank), joining viewers
  // wait for their replay and live output is held by the seeding.
  private screenSettled: boolean;
  private seeding: LogSeeding | undefined;
  private blankReason: ScreenBlankReason = "quiet";
  private finished = false;
  /** Open class walls showing this console: they keep its line open without a viewer. */
  private keepers = 0;

  constructor(private readonly deps: SharedConsoleDeps) {
    this.screenSettled = deps.readConsoleLog === undefined;
    this.upstream = new CurrentUpstream(deps.limits.heldInputBytes);
    const { limits, log, sessionId } = deps;
    this.screen = new ConsoleScreen(screenOptions(limits), () => this.resumeIfCaughtUp());
    this.connector = new UpstreamConnector(
      { sessionId, connect: deps.connect, findSession: deps.findSession, limits, log },
      {
        opened: (socket, reconnected) => this.attach(socket, reconnected),
        waiting: (state, notice) => this.status.set(state, notice),
        ended: (notice) => this.end(notice),
      },
    );
    this.keyboard = new ConsoleKeyboard({
      sessionId,
      owner: deps.owner,
      log,
      changed: () => {
        for (const viewer of this.viewers) viewer.send(this.keyboard.messageFor(viewer.identity));
        this.announceViewers();
      },
      onTaken: deps.onKeyboardTaken,
    });
    this.fits = new GuestFits({
      sessionId,
      limits,
      setGuestSize: deps.setGuestSize,
      log,
      resizeScreen: (size) => {
        this.screen.resize(size.cols, size.rows);
        this.broadcast({ type: "guest-size", ...size });
      },
      failed: (asker, outcome, size) => asker.send({ type: "fit-failed", code: outcome.failure, ...size }),
    });
  }

  get sessionId(): string {
    return this.deps.sessionId;
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  get upstreamConnected(): boolean {
    return this.upstream.connected;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** Goes up whenever the screen may have changed (see ConsoleScreen.version). */
  get screenVersion(): number {
    return this.screen.version;
  }

  /** Resolves once the output so far is in the screen copy, for `screenText` and `searchableScrollback`. */
  screenParsed(): Promise<void> {
    return this.screen.whenParsed();
  }

  screenText(): ScreenText {
    return this.screen.text();
  }

  /** The rows that left the screen as text, for the class wall's search. */
  searchableScrollback(): DepartedRows {
    return this.screen.searchableScrollback();
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
    if (!this.upstream.connected) this.connector.connectIfIdle();
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
    viewer.send(this.status.message());
    viewer.send(this.keyboard.messageFor(viewer.identity));
    viewer.send({ type: "guest-size", ...this.fits.size });
    this.announceViewers();
    // A viewer joining before the first screen is settled gets it once it is (settleScreen).
    if (this.screenSettled) this.replayTo(viewer, !this.screen.hasOutput);
    if (!this.upstream.connected) this.connector.connectIfIdle();
  }

  /** Pings the VM's console and every viewer; closes viewers whose sign-in expired. */
  heartbeat(now: number): void {
    this.upstream.heartbeat();
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.loginExpiresAt <= now) {
        viewer.end(notices.signInExpired);
      } else {
        viewer.heartbeat();
      }
    }
  }

  /** Ends the console when its session is over, even if KubeVirt keeps the line open. */
  async checkSession(): Promise<void> {
    if (this.finished || this.connector.attempting) return;
    const verdict = await this.connector.judgeSession();
    if (verdict.kind === "ended") return this.end(verdict.notice);
    if (verdict.kind === "running") await this.showIdle();
  }

  private async showIdle(): Promise<void> {
    const idle = await this.deps.idleNotice?.().catch(() => null);
    if (idle !== undefined && !this.finished) this.status.showIdle(idle);
  }

  /** Closes the sockets of one sign-in (it signed out). */
  endViewersOf(signInId: string, notice: Notice): void {
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.signInId === signInId) viewer.end(notice);
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
    if (!this.keyboard.canType(viewer.identity)) return;
    this.deps.onInput?.();
    if (!this.upstream.send(bytes)) viewer.send({ type: "input-refused", reason: "not_connected" });
  }

  control(viewer: ConsoleViewer, message: Exclude<ConsoleClientMessage, { type: "ack" }>): void {
    switch (message.type) {
      case "take-keyboard":
        return this.keyboard.take(viewer.identity);
      case "release-keyboard":
        return this.keyboard.release(viewer.identity);
      case "fit-guest":
        if (this.keyboard.canType(viewer.identity))
          this.fits.request({ cols: message.cols, rows: message.rows }, viewer);
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
    const { username } = viewer.identity;
    const stillHere = [...this.viewers].some((other) => other.identity.username === username);
    if (!stillHere) this.keyboard.personLeft(viewer.identity);
    this.announceViewers();
    this.lingerIfUnused();
  }

  private lingerIfUnused(): void {
    if (this.finished || this.viewers.size > 0 || this.keepers > 0 || this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => this.shutDown(), this.deps.limits.lingerMs);
  }

  // The line to the VM

  private attach(line: UpstreamLine, reconnected: boolean): void {
    if (this.finished) {
      line.close();
      return;
    }
    this.upstream.attach(line, {
      output: (chunk) => (this.seeding ? this.holdWhileSeeding(chunk, this.seeding) : this.deliver(chunk)),
      lost: (code) => this.onLost(code),
      ended: (notice) => this.end(notice),
    });
    this.seedFromLogOnce();
    if (reconnected) this.deps.onReconnected?.();
    this.status.set("connected", null);
  }

  private onLost(code: number): void {
    this.upstream.lost();
    this.deps.log.info({ sessionId: this.deps.sessionId, code }, "VM console connection lost");
    if (this.viewers.size === 0 && this.keepers === 0) {
      this.shutDown();
      return;
    }
    this.connector.reconnectAfterDrop();
  }

  // The first screen, from the serial console log

  /** On the first line to the VM: its output is held while the log is read (log-seeding.ts). */
  private seedFromLogOnce(): void {
    const read = this.deps.readConsoleLog;
    if (this.screenSettled || this.seeding || !read) return;
    const { sessionId, limits, log } = this.deps;
    this.seeding = new LogSeeding({ sessionId, read, limits, log }, (screen) => this.settleScreen(screen));
  }

  private holdWhileSeeding(chunk: Buffer, seeding: LogSeeding): void {
    // Recorded as it arrives, like all output; the log's part is not: the recording has it already
    // from when the console was last open, or never saw it.
    this.deps.recorder?.output(chunk);
    seeding.hold(chunk);
    this.upstream.pauseAbove(seeding.heldBytes, this.deps.limits.highWatermarkBytes);
  }

  /** The log's screen first, then every viewer's replay, then the held output the log lacked. */
  private settleScreen({ seed, live, blankReason }: SeededScreen): void {
    this.seeding = undefined;
    this.screenSettled = true;
    this.blankReason = blankReason;
    if (this.finished) return;
    this.screen.write(seed);
    for (const viewer of this.viewers) this.replayTo(viewer, !this.screen.hasOutput);
    if (live.length > 0) this.show(live);
    // Nothing may have been shown to parse: a line paused for the held output reads on.
    this.resumeIfCaughtUp();
  }

  // Output and flow control

  private deliver(chunk: Buffer): void {
    this.deps.recorder?.output(chunk);
    this.show(chunk);
  }

  /** Into the screen copy and out to the viewers, under flow control. */
  private show(chunk: Buffer): void {
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
    this.upstream.pauseAbove(this.screen.backlogBytes, highWatermarkBytes);
  }

  /** The screen as of now, then live output; joining viewers and held ones that caught up get it. */
  private replayTo(viewer: ConsoleViewer, fresh: boolean): void {
    viewer.beginReplay();
    void this.screen
      .snapshot()
      .then((screen) =>
        viewer.replay(screen, fresh, this.screen.showsNothing ? this.blankReason : undefined),
      );
  }

  /** The owner's viewers and the keyboard holder's: held rather than dropped when behind. */
  private keptInStep(viewer: ConsoleViewer): boolean {
    const { access, username } = viewer.identity;
    return access === "owner" || (access === "staff" && this.keyboard.isHeldBy(username));
  }

  private resumeIfCaughtUp(): void {
    if (!this.upstream.isPaused || this.finished) return;
    if (this.screen.backlogBytes > this.deps.limits.lowWatermarkBytes) {
      // No more output comes to make a batch due: parse what waits now, not once it is quiet.
      void this.screen.whenParsed();
      return;
    }
    this.upstream.resume();
  }

  // Who is here

  private announceViewers(): void {
    if (this.viewers.size === 0) return;
    const identities = [...this.viewers].map((viewer) => viewer.identity);
    const message = viewersMessage(identities, this.deps.owner, this.keyboard.heldBy, (identity) =>
      this.keyboard.canType(identity),
    );
    this.broadcast(message);
  }

  // The end

  private broadcast(message: ConsoleServerMessage): void {
    for (const viewer of this.viewers) viewer.send(message);
  }

  private end(notice: Notice): void {
    if (this.finished) return;
    this.finished = true;
    this.deps.log.info({ sessionId: this.deps.sessionId, reason: notice.message }, "console ended");
    for (const viewer of [...this.viewers]) viewer.end(notice);
    this.cleanUp();
  }

  private cleanUp(): void {
    this.seeding?.cancel();
    this.seeding = undefined;
    this.connector.stop();
    clearTimeout(this.lingerTimer);
    this.fits.stop();
    this.upstream.close();
    this.viewers.clear();
    this.screen.dispose();
    this.deps.onFinished(this);
  }
}
