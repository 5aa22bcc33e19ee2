// Every open console in the BFF, one per VMI however many browsers watch it (KubeVirt allows one
// connection per VMI: a second would kick the first), one per terminal a lab allows besides it
// (a shell through the VM's agent), and one per VM screen (shared-screen.ts). Owns the
// timers all consoles share.
import type { FastifyBaseLogger } from "fastify";
import type WebSocket from "ws";
import type { Session } from "../../common/api.ts";
import type { LabConsole } from "../../common/lab.ts";
import { graphicalConsole, serialConsole } from "../../common/console-protocol.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { ConsoleConnector } from "../kube/console-stream.ts";
import type { ConsoleRecorder, RecordingStore } from "../recordings/recording-store.ts";
import type { ScreenRecorder } from "../recordings/screen-recorder.ts";
import type { SetGuestSize } from "./guest-size.ts";
import { defaultConsoleLimits, type ConsoleLimits } from "./limits.ts";
import type { ConsoleLogReader } from "./log-seeding.ts";
import { notices, type Notice } from "./notices.ts";
import { SharedConsole } from "./shared-console.ts";
import { UpstreamLink } from "./upstream.ts";
import { SharedScreen, type ScreenThumbnail } from "./shared-screen.ts";
import type { OpenUpstream } from "./upstream-connector.ts";
import { ConsoleViewer, type ViewerIdentity } from "./viewer.ts";
import { terminalUpstream, type OpenTerminal } from "./terminal-line.ts";

export interface ConsoleHubDeps {
  connect: ConsoleConnector;
  /** A VMI's screen (KubeVirt's vnc subresource), for labs with a graphical console. */
  connectScreen: ConsoleConnector;
  /** A lab's terminals, shells through the VM's agent (terminals/agent-terminal.ts). */
  openTerminal: OpenTerminal;
  /** Fits go through the VM's agent (guest-size.ts). */
  setGuestSize: SetGuestSize;
  findSession(id: string): Promise<Session | undefined>;
  log: FastifyBaseLogger;
  limits?: Partial<ConsoleLimits>;
  /** Where every console's output is recorded (docs/console.md, "Recordings"); none when absent. */
  recordings?: Pick<RecordingStore, "recorderFor"> & Partial<Pick<RecordingStore, "screenRecorderFor">>;
  /**
   * A console closed (ended, idle or shut down) and its recorder stored its last output: with several
   * replicas, its lease goes (whoever takes the console next continues the recording after it).
   */
  onClosed?(sessionId: string): void;
  /** A console's line to the VM dropped and was opened again (for lab_console_console_upstream_reconnects_total). */
  onUpstreamReconnected?(): void;
  /** Where staff taking a student's keyboard is recorded. */
  audit?: Pick<AuditLog, "record">;
  /** The VMs' serial console logs: a fresh console's screen starts from its VM's (log-seeding.ts). */
  readConsoleLog?: ConsoleLogReader;
  /** Input reached a session's VM from any of its consoles (idle/console-activity.ts). */
  onInput?(sessionId: string): void;
}

export interface ConsoleHubStats {
  consoles: number;
  connectedUpstreams: number;
  viewers: number;
}

export class ConsoleHub {
  readonly limits: ConsoleLimits;
  private readonly consoles = new Map<string, SharedConsole>();
  private readonly screens = new Map<string, SharedScreen>();
  /** Consoles that closed, until their recorder stored the last output and onClosed ran. */
  private readonly closing = new Set<Promise<void>>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private sessionCheckTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: ConsoleHubDeps) {
    this.limits = { ...defaultConsoleLimits, ...deps.limits };
  }

  /**
   * Adds an accepted browser socket to one of its session's consoles, the serial one or a terminal
   * (opening that console if needed).
   */
  join(
    session: { id: string; owner: string },
    socket: WebSocket,
    identity: ViewerIdentity,
    terminal: number = serialConsole,
  ): void {
    if (this.closed) {
      socket.close(1001, "server shutting down");
      return;
    }
    if (terminal === graphicalConsole) {
      this.screenFor(session).join(socket, identity);
      return;
    }
    const shared = this.consoleFor(session, terminal);
    shared.join(new ConsoleViewer(socket, identity, this.limits, shared));
  }

  /**
   * Keeps open what a class wall shows of a session, with nobody watching: its serial console, its
   * screen, or both, as its lab offers (SharedConsole.keepOpen); undefined once the hub is closed.
   */
  keepShownOpen(
    session: { id: string; owner: string },
    shown: readonly LabConsole[],
  ): (() => void) | undefined {
    if (this.closed) return undefined;
    const releases = [
      ...(shown.includes("serial") ? [this.consoleFor(session, serialConsole).keepOpen()] : []),
      ...(shown.includes("graphical") ? [this.screenFor(session).keepOpen()] : []),
    ];
    return () => {
      for (const release of releases) release();
    };
  }

  /** An open screen's miniature for the wall (its version goes up with every change of the screen). */
  thumbnailOf(sessionId: string): ScreenThumbnail | undefined {
    return this.screens.get(sessionId)?.thumbnail();
  }

  private screenFor(session: { id: string; owner: string }): SharedScreen {
    let screen = this.screens.get(session.id);
    if (!screen) {
      const { connectScreen } = this.deps;
      // Recorded whenever the screen is open, as a console is, whoever watches (docs/vnc.md).
      const recorder = this.deps.recordings?.screenRecorderFor?.(session);
      screen = new SharedScreen({
        sessionId: session.id,
        owner: session.owner,
        connect: async (sessionId, signal) => new UpstreamLink(await connectScreen(sessionId, signal)),
        findSession: this.deps.findSession,
        limits: this.limits,
        log: this.deps.log,
        onFinished: (finished) => this.forgetScreen(finished, recorder),
        onKeyboardTaken: (by, from) => void this.recordKeyboardTaken(session, graphicalConsole, by, from),
        onInput: () => this.deps.onInput?.(session.id),
        onUpdate: recorder && ((image, rects) => recorder.update(image, rects)),
      });
      this.screens.set(session.id, screen);
      this.startTimers();
    }
    return screen;
  }

  private forgetScreen(finished: SharedScreen, recorder: ScreenRecorder | undefined): void {
    if (this.screens.get(finished.sessionId) === finished) this.screens.delete(finished.sessionId);
    if (this.isEmpty) this.stopTimers();
    this.afterRecorderClosed(finished.sessionId, recorder);
  }

  private get isEmpty(): boolean {
    return this.consoles.size === 0 && this.screens.size === 0;
  }

  /** Every open console, text and screen alike. */
  private everyConsole(): (SharedConsole | SharedScreen)[] {
    return [...this.consoles.values(), ...this.screens.values()];
  }

  /**
   * Keeps a session's console open with nobody watching, for a class wall (SharedConsole.keepOpen);
   * undefined once the hub is closed.
   */
  keepOpen(session: { id: string; owner: string }): (() => void) | undefined {
    if (this.closed) return undefined;
    return this.consoleFor(session, serialConsole).keepOpen();
  }

  /** An open serial console's screen, for miniatures and their search: its version and, when asked, its text. */
  screenOf(
    sessionId: string,
  ):
    | Pick<SharedConsole, "screenVersion" | "screenParsed" | "screenText" | "searchableScrollback">
    | undefined {
    return this.consoles.get(consoleKey(sessionId, serialConsole));
  }

  private consoleFor(session: { id: string; owner: string }, terminal: number): SharedConsole {
    const key = consoleKey(session.id, terminal);
    let shared = this.consoles.get(key);
    if (!shared) {
      const size = { cols: this.limits.initialCols, rows: this.limits.initialRows };
      const recorder = this.deps.recordings?.recorderFor(session, size, terminal);
      shared = new SharedConsole({
        sessionId: session.id,
        owner: session.owner,
        ...this.lineOf(terminal, size),
        findSession: this.deps.findSession,
        limits: this.limits,
        log: this.deps.log,
        recorder,
        onFinished: (finished) => this.forget(key, finished, recorder),
        onReconnected: this.deps.onUpstreamReconnected,
        onKeyboardTaken: (by, from) => void this.recordKeyboardTaken(session, terminal, by, from),
        // A terminal's shell starts with it: there is no earlier output to show.
        readConsoleLog: terminal === serialConsole ? this.deps.readConsoleLog : undefined,
        onInput: () => this.deps.onInput?.(session.id),
        idleNotice: async () => idleNoticeOf(await this.deps.findSession(session.id)),
      });
      this.consoles.set(key, shared);
      this.startTimers();
    }
    return shared;
  }

  /** How a console reaches what it shows, and how its size is set there. */
  private lineOf(
    terminal: number,
    size: { cols: number; rows: number },
  ): { connect: OpenUpstream; setGuestSize: SetGuestSize } {
    if (terminal === serialConsole) {
      const { connect } = this.deps;
      return {
        connect: async (sessionId, signal) => new UpstreamLink(await connect(sessionId, signal)),
        setGuestSize: this.deps.setGuestSize,
      };
    }
    return terminalUpstream(this.deps.openTerminal, size);
  }

  /** A sign-in ended (sign-out or expiry): its sockets close at once. */
  endSignIn(signInId: string): void {
    for (const shared of this.everyConsole()) {
      shared.endViewersOf(signInId, notices.signInEnded);
    }
  }

  /** Any console of the session is open here, its serial console or a terminal. */
  has(sessionId: string): boolean {
    return this.everyConsole().some((shared) => shared.sessionId === sessionId);
  }

  /**
   * Another replica may hold these consoles now (this one lost touch with the cluster): close them
   * without an "ended"; their browsers reconnect and find where each console lives.
   */
  letGo(): void {
    for (const shared of this.everyConsole()) shared.shutDown();
  }

  stats(): ConsoleHubStats {
    let connectedUpstreams = 0;
    let viewers = 0;
    const every = this.everyConsole();
    for (const shared of every) {
      if (shared.upstreamConnected) connectedUpstreams += 1;
      viewers += shared.viewerCount;
    }
    return { consoles: every.length, connectedUpstreams, viewers };
  }

  /**
   * Closes every console; resolves once their recorders stored the last output (each waits a few
   * seconds at most) and onClosed ran for each, so the stores may close after.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const shared of this.everyConsole()) shared.shutDown();
    this.stopTimers();
    while (this.closing.size > 0) await Promise.all(this.closing);
  }

  /**
   * Recorded here, on the replica holding the console, where the take is decided: the browser only
   * asks. No client address: the viewer's request may have reached another replica.
   */
  private async recordKeyboardTaken(
    session: { id: string; owner: string },
    terminal: number,
    by: ViewerIdentity,
    from: string,
  ): Promise<void> {
    if (!this.deps.audit) return;
    const found = await this.deps.findSession(session.id).catch(() => undefined);
    await this.deps.audit.record({
      action: "take-keyboard",
      actor: { username: by.username, role: by.role },
      session: { ...session, labId: found?.labId, section: found?.section ?? null },
      details: detailsOf(terminal, { from }),
    });
  }

  private forget(key: string, finished: SharedConsole, recorder: ConsoleRecorder | undefined): void {
    if (this.consoles.get(key) === finished) this.consoles.delete(key);
    if (this.isEmpty) this.stopTimers();
    this.afterRecorderClosed(finished.sessionId, recorder);
  }

  /**
   * The console or screen is closed already: only letting it go (its lease) waits for the recording,
   * lest the replica taking it over read where the recording stands before the last output is in.
   */
  private afterRecorderClosed(sessionId: string, recorder: Pick<ConsoleRecorder, "close"> | undefined): void {
    const closed = (recorder?.close() ?? Promise.resolve())
      .then(() => this.deps.onClosed?.(sessionId))
      .catch((error: unknown) => this.deps.log.error({ sessionId, err: error }, "closing a console failed"));
    this.closing.add(closed);
    void closed.finally(() => this.closing.delete(closed));
  }

  private startTimers(): void {
    this.heartbeatTimer ??= setInterval(() => {
      const now = Date.now();
      for (const shared of this.everyConsole()) shared.heartbeat(now);
    }, this.limits.pingIntervalMs);
    this.sessionCheckTimer ??= setInterval(() => {
      for (const shared of this.everyConsole()) void shared.checkSession();
    }, this.limits.sessionCheckMs);
  }

  private stopTimers(): void {
    clearInterval(this.heartbeatTimer);
    clearInterval(this.sessionCheckTimer);
    this.heartbeatTimer = undefined;
    this.sessionCheckTimer = undefined;
  }
}

function idleNoticeOf(session: Session | undefined): Notice | null {
  const idle = session?.idle;
  if (!idle) return null;
  return idle.state === "paused" ? notices.idlePaused : notices.idleWarning(idle.endsAt, idle.action);
}

/** Which console an audit row is about: the serial console says nothing, the others their kind or number. */
export function detailsOf<T extends object>(
  terminal: number,
  details: T,
): T & { console?: "screen"; terminal?: number } {
  if (terminal === serialConsole) return details;
  return terminal === graphicalConsole ? { ...details, console: "screen" } : { ...details, terminal };
}

function consoleKey(sessionId: string, terminal: number): string {
  return terminal === serialConsole ? sessionId : `${sessionId}/${terminal}`;
}
