// One VM's screen as every viewer shares it: exactly one connection to KubeVirt's vnc subresource
// (a second would cut the first, docs/vnc.md), one framebuffer the BFF keeps, one keyboard. The line
// is opened and reopened as the serial console's is (console/upstream-connector.ts); who may type
// is decided as there (console/keyboard.ts), and presence is told the same way (console/presence.ts).
//
// The framebuffer outlives the line: a viewer joining or reconnecting is sent it at once, never a
// blank screen, and a line that drops and comes back paints over it.
import type { FastifyBaseLogger } from "fastify";
import type { Session } from "../../common/api.ts";
import type { UpstreamState } from "../../common/console-protocol.ts";
import type { ScreenClientMessage, ScreenServerMessage } from "../../common/screen-protocol.ts";
import type { Image } from "../../common/png.ts";
import { ConsoleKeyboard } from "./keyboard.ts";
import type { ConsoleLimits } from "./limits.ts";
import { notices, wireNotice, type Notice } from "./notices.ts";
import { viewersMessage } from "./presence.ts";
import { UpstreamConnector, type OpenUpstream } from "./upstream-connector.ts";
import type { UpstreamLine } from "./upstream.ts";
import type { ViewerIdentity } from "./viewer.ts";
import { keystrokesOf, PasteTypist } from "../screen/paste-keys.ts";
import { RfbClient, type Framebuffer, type Rect } from "../screen/rfb-client.ts";
import type { ViewerMessage } from "../screen/rfb-server.ts";
import { ScreenViewer, SharedFrame, type ScreenViewerEvents } from "./screen-viewer.ts";
import { thumbnailPng } from "../screen/thumbnail.ts";
import type WebSocket from "ws";

export interface SharedScreenDeps {
  sessionId: string;
  owner: string;
  /** Opens the line to the VM's VNC server (an UpstreamLink around KubeVirt's vnc websocket). */
  connect: OpenUpstream;
  findSession(id: string): Promise<Session | undefined>;
  limits: ConsoleLimits;
  log: FastifyBaseLogger;
  /** The screen is over (ended, idle, shut down): forget it. */
  onFinished(screen: SharedScreen): void;
  onKeyboardTaken?(by: ViewerIdentity, from: string): void;
  /** Someone who may type sent input to the VM (idle handling counts it as activity). */
  onInput?(): void;
  /** Every update, after the viewers had theirs (recordings, the wall's miniatures). */
  onUpdate?(screen: Image, rects: readonly Rect[]): void;
}

export interface ScreenThumbnail {
  version: number;
  width: number;
  height: number;
  png: Buffer;
}

let versions = 0;
function nextVersion(): number {
  versions += 1;
  return versions;
}

/** Before the first line opens: the size of QEMU's own screen while it waits to start (docs/vnc.md). */
function blankScreen(): Framebuffer {
  return { width: 640, height: 480, pixels: new Uint8Array(640 * 480 * 4) };
}

export class SharedScreen implements ScreenViewerEvents {
  private readonly viewers = new Set<ScreenViewer>();
  private readonly connector: UpstreamConnector;
  private readonly keyboard: ConsoleKeyboard;
  private upstream: { line: UpstreamLine; rfb: RfbClient } | undefined;
  private framebuffer: Framebuffer = blankScreen();
  private name = "";
  private status: { state: UpstreamState; notice: Notice | null } = { state: "connecting", notice: null };
  private lingerTimer: NodeJS.Timeout | undefined;
  private quietRequest: NodeJS.Timeout | undefined;
  private readonly typist: PasteTypist;
  private finished = false;
  private keepers = 0;
  /** Keys the holder pressed and has not released, and where the pointer is with which buttons. */
  private readonly keysDown = new Set<number>();
  private pointer = { x: 0, y: 0, buttons: 0 };
  private pointerMoved: NodeJS.Immediate | undefined;
  /** Goes up with every update of the framebuffer, never the same for two screens (the wall compares them). */
  version = nextVersion();
  private wholeScreenMade: { version: number; framebuffer: Framebuffer; frame: SharedFrame } | undefined;
  private thumbnailMade: { version: number; thumbnail: ScreenThumbnail } | undefined;

  constructor(private readonly deps: SharedScreenDeps) {
    const { sessionId, limits, log, findSession, connect } = deps;
    this.typist = new PasteTypist(limits.screenPasteKeyMs);
    this.connector = new UpstreamConnector(
      { sessionId, connect, findSession, limits, log },
      {
        opened: (line, reconnected) => this.attach(line, reconnected),
        waiting: (state, notice) => this.setStatus(state, notice),
        ended: (notice) => this.end(notice),
      },
    );
    this.keyboard = new ConsoleKeyboard({
      sessionId,
      owner: deps.owner,
      log,
      changed: () => {
        this.releaseHeldInput();
        for (const viewer of this.viewers) viewer.send(this.keyboard.messageFor(viewer.identity));
        this.announceViewers();
      },
      onTaken: deps.onKeyboardTaken,
    });
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

  /** The screen as it is now (the same object until the next update or resize). */
  get screen(): Image {
    return this.framebuffer;
  }

  /** The wall's miniature of the screen as it is now, made at most once per version whoever asks. */
  thumbnail(): ScreenThumbnail {
    if (this.thumbnailMade?.version !== this.version) {
      this.thumbnailMade = {
        version: this.version,
        thumbnail: { version: this.version, ...thumbnailPng(this.framebuffer) },
      };
    }
    return this.thumbnailMade.thumbnail;
  }

  join(socket: WebSocket, identity: ViewerIdentity): void {
    const viewer = new ScreenViewer(
      socket,
      identity,
      this.deps.limits,
      () => ({ ...this.framebuffer, name: this.name }),
      this,
    );
    if (this.finished) {
      viewer.goAway();
      return;
    }
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.viewers.add(viewer);
    viewer.send(this.statusMessage());
    viewer.send(this.keyboard.messageFor(identity));
    this.announceViewers();
    if (!this.upstream) this.connector.connectIfIdle();
  }

  /** Keeps the line open with nobody watching, for a class wall's miniature; the returned function lets go. */
  keepOpen(): () => void {
    if (this.finished) return () => undefined;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.keepers += 1;
    if (!this.upstream) this.connector.connectIfIdle();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.keepers -= 1;
      this.lingerIfUnused();
    };
  }

  heartbeat(now: number): void {
    this.upstream?.line.heartbeat();
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.loginExpiresAt <= now) viewer.end(notices.signInExpired);
      else viewer.heartbeat();
    }
  }

  async checkSession(): Promise<void> {
    if (this.finished || this.connector.attempting) return;
    const verdict = await this.connector.judgeSession();
    if (verdict.kind === "ended") this.end(verdict.notice);
  }

  endViewersOf(signInId: string, notice: Notice): void {
    for (const viewer of [...this.viewers]) {
      if (viewer.identity.signInId === signInId) viewer.end(notice);
    }
  }

  shutDown(): void {
    if (this.finished) return;
    this.finished = true;
    for (const viewer of [...this.viewers]) viewer.goAway();
    this.cleanUp();
  }

  // ScreenViewerEvents

  ready(viewer: ScreenViewer): void {
    // The kept framebuffer first: a reconnecting viewer never sees a blank screen.
    viewer.changed(this.wholeScreen());
  }

  input(viewer: ScreenViewer, message: Extract<ViewerMessage, { type: "key" | "pointer" }>): void {
    const rfb = this.upstream?.rfb;
    if (!rfb || !this.keyboard.canType(viewer.identity)) return;
    this.deps.onInput?.();
    if (message.type === "key") {
      if (message.down) this.keysDown.add(message.keysym);
      else this.keysDown.delete(message.keysym);
      rfb.key(message.keysym, message.down);
    } else {
      const buttonsChanged = message.buttons !== this.pointer.buttons;
      this.pointer = { x: message.x, y: message.y, buttons: message.buttons };
      // Moves are sent once a turn, the latest: a browser sends them by the hundred, each a frame
      // to KubeVirt. A press or release goes at once, where it happened.
      if (buttonsChanged) this.sendPointer();
      else this.pointerMoved ??= setImmediate(() => this.sendPointer());
    }
  }

  private sendPointer(): void {
    clearImmediate(this.pointerMoved);
    this.pointerMoved = undefined;
    const { x, y, buttons } = this.pointer;
    this.upstream?.rfb.pointer(x, y, buttons);
  }

  /**
   * The keyboard changed hands: whatever the last holder still pressed is released, or the guest
   * would go on seeing a Shift or a mouse button held by someone who can no longer let go of it.
   */
  private releaseHeldInput(): void {
    const rfb = this.upstream?.rfb;
    for (const keysym of this.keysDown) rfb?.key(keysym, false);
    this.keysDown.clear();
    if (this.pointer.buttons !== 0) {
      rfb?.pointer(this.pointer.x, this.pointer.y, 0);
      this.pointer = { ...this.pointer, buttons: 0 };
    }
  }

  control(viewer: ScreenViewer, message: ScreenClientMessage): void {
    switch (message.type) {
      case "take-keyboard":
        return this.keyboard.take(viewer.identity);
      case "release-keyboard":
        return this.keyboard.release(viewer.identity);
      case "paste":
        return this.typePaste(viewer, message.text);
    }
  }

  closed(viewer: ScreenViewer): void {
    if (!this.viewers.delete(viewer) || this.finished) return;
    const { username } = viewer.identity;
    const stillHere = [...this.viewers].some((other) => other.identity.username === username);
    if (!stillHere) this.keyboard.personLeft(viewer.identity);
    this.announceViewers();
    this.lingerIfUnused();
  }

  // The line to the VM

  private attach(line: UpstreamLine, reconnected: boolean): void {
    if (this.finished) {
      line.close();
      return;
    }
    const rfb = new RfbClient(
      (bytes) => line.send(bytes),
      {
        ready: () => {
          this.name = rfb.name;
        },
        updated: (rects) => this.updated(rfb, rects),
        failed: (reason) => {
          this.deps.log.warn({ sessionId: this.deps.sessionId, reason }, "VM screen's RFB failed");
          line.close();
          this.onLost(1002);
        },
      },
      this.framebuffer,
    );
    this.upstream = { line, rfb };
    line.listen({
      output: (chunk) => rfb.receive(chunk),
      lost: (code) => this.onLost(code),
      ended: (notice) => this.end(notice),
    });
    if (reconnected) this.deps.log.info({ sessionId: this.deps.sessionId }, "VM screen reconnected");
    this.setStatus("connected", null);
  }

  private updated(rfb: RfbClient, rects: Rect[]): void {
    if (this.upstream?.rfb !== rfb) return;
    this.framebuffer = rfb.framebuffer;
    this.version = nextVersion();
    const frame = new SharedFrame(this.framebuffer, rects);
    for (const viewer of [...this.viewers]) viewer.changed(frame);
    this.deps.onUpdate?.(this.framebuffer, rects);
    // The next update as soon as there is one while someone watches; with nobody (a wall keeping
    // the line open) a few a second are plenty.
    if (this.viewers.size > 0) rfb.requestUpdate(true);
    else this.requestSoon(this.deps.limits.screenQuietRefreshMs);
  }

  private requestSoon(delayMs: number): void {
    if (this.quietRequest) return;
    this.quietRequest = setTimeout(() => {
      this.quietRequest = undefined;
      this.upstream?.rfb.requestUpdate(true);
    }, delayMs);
  }

  private onLost(code: number): void {
    if (!this.upstream) return;
    this.upstream = undefined;
    this.typist.stop();
    this.deps.log.info({ sessionId: this.deps.sessionId, code }, "VM screen connection lost");
    if (this.viewers.size === 0 && this.keepers === 0) {
      this.shutDown();
      return;
    }
    this.connector.reconnectAfterDrop();
  }

  /** The whole screen as one update, made once per version for every viewer that joins meanwhile. */
  private wholeScreen(): SharedFrame {
    const { framebuffer, version } = this;
    if (this.wholeScreenMade?.version !== version || this.wholeScreenMade.framebuffer !== framebuffer) {
      const frame = new SharedFrame(framebuffer, [
        { x: 0, y: 0, width: framebuffer.width, height: framebuffer.height },
      ]);
      this.wholeScreenMade = { version, framebuffer, frame };
    }
    return this.wholeScreenMade.frame;
  }

  private typePaste(viewer: ScreenViewer, text: string): void {
    const refuse = (reason: Extract<ScreenServerMessage, { type: "paste" }>["reason"]) =>
      viewer.send({ type: "paste", outcome: "refused", characters: 0, reason });
    if (!this.keyboard.canType(viewer.identity)) return refuse("not_holder");
    if (!this.upstream) return refuse("not_connected");
    if (this.typist.busy) return refuse("busy");
    const typed = keystrokesOf(text);
    if ("untypable" in typed) return refuse("unsupported");
    this.deps.onInput?.();
    this.typist.type(
      typed.strokes,
      () => {
        // Checked at every key: the keyboard may change hands, or the viewer go, while a paste types.
        const rfb = this.upstream?.rfb;
        if (!rfb || !viewer.isOpen || !this.keyboard.canType(viewer.identity)) return undefined;
        return (stroke) => rfb.key(stroke.keysym, stroke.down);
      },
      (characters) => viewer.send({ type: "paste", outcome: "typed", characters }),
    );
  }

  // Who is here, and the status

  private announceViewers(): void {
    if (this.viewers.size === 0) return;
    const identities = [...this.viewers].map((viewer) => viewer.identity);
    const message = viewersMessage(identities, this.deps.owner, this.keyboard.heldBy, (identity) =>
      this.keyboard.canType(identity),
    );
    this.broadcast(message);
  }

  private statusMessage(): ScreenServerMessage {
    const { state, notice } = this.status;
    return { type: "status", state, message: notice?.message ?? null, notice: notice && wireNotice(notice) };
  }

  private setStatus(state: UpstreamState, notice: Notice | null): void {
    if (this.status.state === state && this.status.notice === notice) return;
    this.status = { state, notice };
    this.broadcast(this.statusMessage());
  }

  private broadcast(message: ScreenServerMessage): void {
    for (const viewer of this.viewers) viewer.send(message);
  }

  private lingerIfUnused(): void {
    if (this.finished || this.viewers.size > 0 || this.keepers > 0 || this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => this.shutDown(), this.deps.limits.lingerMs);
  }

  private end(notice: Notice): void {
    if (this.finished) return;
    this.finished = true;
    this.deps.log.info({ sessionId: this.deps.sessionId, reason: notice.message }, "screen ended");
    for (const viewer of [...this.viewers]) viewer.end(notice);
    this.cleanUp();
  }

  private cleanUp(): void {
    this.connector.stop();
    this.typist.stop();
    clearTimeout(this.lingerTimer);
    clearTimeout(this.quietRequest);
    clearImmediate(this.pointerMoved);
    this.upstream?.line.close();
    this.upstream = undefined;
    this.viewers.clear();
    this.deps.onFinished(this);
  }
}
