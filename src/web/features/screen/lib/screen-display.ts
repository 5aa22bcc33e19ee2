// A VM's screen in the page: a ScreenConnection, and a noVNC RFB drawing each of its channels into the
// host element, scaled to the host's box, view-only unless this viewer holds the keyboard. Between a
// drop and the next connection the last picture stays, dimmed (the BFF sends its kept framebuffer
// first on reconnect, so it is replaced at once), and so it does once the screen has ended. A plain
// class: the React hook only creates and disposes it.
import RFB from "@novnc/novnc";
import { ScreenConnection, type ScreenState } from "./screen-connection.ts";
import type { ScreenChannel } from "./screen-channel.ts";
import { keyStrokes, type SpecialKey } from "./special-keys.ts";

export interface ScreenDisplayState extends ScreenState {
  /** noVNC has the server's picture (the RFB handshake is done). */
  live: boolean;
  /** The last picture is shown still, since the live one is gone. */
  still: boolean;
  /** The VM's screen size as last drawn (its box keeps this shape); unknown before the first picture. */
  size: { width: number; height: number } | null;
}

export class ScreenDisplay {
  private readonly connection: ScreenConnection;
  private rfb: RFB | null = null;
  private local: Pick<ScreenDisplayState, "live" | "still" | "size"> = {
    live: false,
    still: false,
    size: null,
  };
  private state: ScreenDisplayState;
  private readonly listeners = new Set<() => void>();
  private readonly disposers: (() => void)[] = [];
  private disposed = false;

  constructor(
    private readonly host: HTMLElement,
    /** Where the last picture is kept while there is no live one. */
    private readonly stillCanvas: HTMLCanvasElement,
    path: string,
  ) {
    this.connection = new ScreenConnection(path);
    this.state = { ...this.connection.getState(), ...this.local };
    this.disposers.push(
      this.connection.subscribe(() => this.refresh()),
      this.connection.onChannel((channel) => this.attach(channel)),
    );
    this.connection.start();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): ScreenDisplayState => this.state;

  reconnectNow(): void {
    this.connection.reconnectNow();
  }

  takeKeyboard(): void {
    this.connection.takeKeyboard();
  }

  releaseKeyboard(): void {
    this.connection.releaseKeyboard();
  }

  paste(text: string): boolean {
    return this.connection.paste(text);
  }

  clearPaste(): void {
    this.connection.clearPaste();
  }

  /** A key the browser would not pass on (Ctrl+Alt+Del, F-keys); then the screen has the focus again. */
  pressSpecialKey(key: SpecialKey): void {
    const rfb = this.rfb;
    if (!rfb || !this.state.keyboard?.canType) return;
    if (key.kind === "ctrl-alt-del") rfb.sendCtrlAltDel();
    else for (const stroke of keyStrokes(key)) rfb.sendKey(stroke.keysym, stroke.code, stroke.down);
    this.focus();
  }

  focus(): void {
    this.rfb?.focus({ preventScroll: true });
  }

  dispose(): void {
    this.disposed = true;
    for (const dispose of this.disposers.splice(0)) dispose();
    // noVNC first, while it is connected (a disconnected RFB logs an error when told to disconnect).
    this.rfb?.disconnect();
    this.rfb = null;
    this.connection.dispose();
    this.listeners.clear();
  }

  private attach(channel: ScreenChannel): void {
    const rfb = new RFB(this.host, channel, { shared: true });
    rfb.scaleViewport = true;
    rfb.background = "#101418";
    // The BFF draws no cursor of its own: a dot shows where the pointer is over a screen that has none.
    rfb.showDotCursor = true;
    rfb.viewOnly = !this.state.keyboard?.canType;
    // RFB appends its screen, holding its canvas, at once; kept to copy the last picture from.
    const canvas = this.host.lastElementChild?.querySelector("canvas") ?? null;
    // noVNC sizes its canvas to the VM's screen (ServerInit, then DesktopSize): the box follows its shape.
    const sizeWatch = new MutationObserver(() => canvas && this.noteSize(canvas));
    if (canvas) sizeWatch.observe(canvas, { attributes: true, attributeFilter: ["width", "height"] });
    rfb.addEventListener("connect", () => {
      if (this.rfb !== rfb) return;
      this.setLocal({ live: true, still: false });
    });
    rfb.addEventListener("disconnect", () => {
      sizeWatch.disconnect();
      if (this.rfb !== rfb || this.disposed) return;
      this.rfb = null;
      if (this.local.live && canvas) this.keepStill(canvas);
      this.setLocal({ live: false, still: this.local.still || this.local.live });
    });
    this.rfb = rfb;
  }

  private noteSize(canvas: HTMLCanvasElement): void {
    const { width, height } = canvas;
    if (width === 0 || height === 0) return;
    if (this.local.size?.width === width && this.local.size.height === height) return;
    this.setLocal({ size: { width, height } });
  }

  private keepStill(canvas: HTMLCanvasElement): void {
    if (canvas.width === 0 || canvas.height === 0) return;
    this.stillCanvas.width = canvas.width;
    this.stillCanvas.height = canvas.height;
    this.stillCanvas.getContext("2d")?.drawImage(canvas, 0, 0);
  }

  private refresh(): void {
    const next = this.connection.getState();
    if (this.rfb) this.rfb.viewOnly = !next.keyboard?.canType;
    this.state = { ...next, ...this.local };
    for (const listener of this.listeners) listener();
  }

  private setLocal(change: Partial<typeof this.local>): void {
    this.local = { ...this.local, ...change };
    this.refresh();
  }
}
