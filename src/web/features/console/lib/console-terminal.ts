// An xterm.js terminal wired to a console connection, always at the guest's size: the BFF's copy of
// the screen is at that size, and a replay drawn at any other would put new output over old rows.
// The keyboard holder's window fits the guest to its box (on open, when it gets the keyboard, and
// when the box or the text size changes); everyone else sees the holder's size, scrolling if their
// box is smaller. With copy on select, Ctrl+Shift+C/V, a guard before pasting many lines, a sticky Ctrl for the key bar
// and a font size control. A plain class: the React hook only creates and disposes it.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import { guestSizeLimits } from "../../../../common/console-protocol.ts";
import { terminalAppearance } from "../../../lib/terminal-appearance.ts";
import { AutoFit } from "./auto-fit.ts";
import { CommittedText } from "./committed-text.ts";
import { ConsoleConnection, type ConsoleState } from "./console-connection.ts";
import { clampFontSize, loadFontSize, saveFontSize } from "./font-size.ts";
import { lineCount, pasteNeedsConfirmation } from "./paste-guard.ts";
import { loadScreenReaderMode, saveScreenReaderMode } from "./screen-reader-mode.ts";
import { sequenceFor, withControl, type BarKey } from "./terminal-keys.ts";

export interface ConsoleTerminalState extends ConsoleState {
  fontSize: number;
  /** xterm.js keeps an accessible copy of the screen and reads new output aloud. */
  screenReaderMode: boolean;
  /** The key bar's Ctrl was pressed: the next key is sent as a control character. */
  ctrlArmed: boolean;
  /** A paste waiting for the person to confirm it. */
  pendingPaste: { text: string; lines: number } | null;
}

type LocalState = Pick<ConsoleTerminalState, "fontSize" | "screenReaderMode" | "ctrlArmed" | "pendingPaste">;

/** The terminal's own lines between outputs, in the page's language. */
export interface ConsoleNotices {
  outputLost: () => string;
}

const scrollbackLines = 5000;
// A console opened while the VM boots asks for the window's size before the guest's agent runs. An
// automatic fit the agent could not take is asked again every few seconds, quietly, for as long as a
// boot takes at most (docs/console.md); only then, or after a click on Fit, is the failure shown.
const automaticFitRetryMs = 5000;
const automaticFitRetryForMs = 3 * 60_000;
const emptyWrite = new Uint8Array(0);

export class ConsoleTerminal {
  private readonly terminal: Terminal;
  private readonly fitAddon = new FitAddon();
  private readonly connection: ConsoleConnection;
  private readonly disposers: (() => void)[] = [];
  private readonly listeners = new Set<() => void>();
  private local: LocalState;
  private state: ConsoleTerminalState;
  /** The size the terminal was last given: the guest's. */
  private shownSize = { cols: 0, rows: 0 };
  /** Whether this window could fit the guest at the last state change (connected, with the keyboard). */
  private drivesSize = false;
  /** Whether the last fit was this window's own (not a click), and until when it is asked again. */
  private readonly automaticFit: {
    last: boolean;
    giveUpAt: number;
    timer: ReturnType<typeof setTimeout> | undefined;
  } = { last: false, giveUpAt: 0, timer: undefined };
  private readonly autoFit = new AutoFit(() => this.fitAutomatically());

  /** `path`: the console socket's path and query (see console-url.ts). */
  constructor(
    private readonly host: HTMLElement,
    path: string,
    notices: ConsoleNotices,
  ) {
    this.local = {
      fontSize: loadFontSize(),
      screenReaderMode: loadScreenReaderMode(),
      ctrlArmed: false,
      pendingPaste: null,
    };
    this.terminal = new Terminal({
      scrollback: scrollbackLines,
      fontSize: this.local.fontSize,
      screenReaderMode: this.local.screenReaderMode,
      ...terminalAppearance,
      cursorBlink: true,
      // Read-only until the BFF says this viewer holds the keyboard.
      disableStdin: true,
    });
    this.terminal.loadAddon(this.fitAddon);
    // In a box of its own without padding: the fit add-on measures the terminal's parent and counts
    // only the terminal's own padding, so in the padded host it would propose a row too many.
    const box = document.createElement("div");
    box.className = "console-terminal";
    host.append(box);
    this.disposers.push(() => box.remove());
    this.terminal.open(box);
    this.shownSize = { cols: this.terminal.cols, rows: this.terminal.rows };

    this.connection = new ConsoleConnection(path, {
      write: (bytes, written) => this.terminal.write(bytes, written),
      // Reset in the write queue's order, so nothing written before it survives into the replay.
      clear: () => this.terminal.write(emptyWrite, () => this.terminal.reset()),
      notice: (notice) => this.terminal.write(`\r\n\x1b[2m${notices[notice]()}\x1b[0m\r\n`),
    });
    this.state = { ...this.connection.getState(), ...this.local };

    // Typed as the terminal's own input, so a read-only viewer's text goes nowhere, as with keys.
    const committedText = new CommittedText(host, (text) => this.terminal.input(text, true));
    this.disposers.push(
      () => committedText.dispose(),
      this.connection.subscribe(() => this.refresh()),
      disposable(
        this.terminal.onData((data) => {
          this.type(data);
          committedText.terminalSent();
        }),
      ),
      disposable(this.terminal.onBinary((data) => this.connection.sendBinaryString(data))),
      disposable(this.terminal.onSelectionChange(() => this.copyOnSelect())),
      listen(host, "paste", (event) => this.interceptPaste(event as ClipboardEvent), { capture: true }),
      observeSize(host, () => this.autoFit.windowResized()),
      // A tab the student is not looking at does not fit the guest (their other tab may); coming
      // back to it does.
      listen(document, "visibilitychange", () => {
        if (!document.hidden) this.autoFit.windowResized();
      }),
      // A guest larger than the box (a smaller window watching, or the moment before a fit) scrolls:
      // its bottom rows, where the prompt is, stay in view.
      disposable(this.terminal.onResize(() => this.showBottom())),
      () => this.autoFit.dispose(),
    );
    this.terminal.attachCustomKeyEventHandler((event) => this.clipboardKeys(event));
    this.connection.start();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): ConsoleTerminalState => this.state;

  focus(): void {
    this.terminal.focus();
  }

  reconnectNow(): void {
    this.connection.reconnectNow();
  }

  takeKeyboard(): void {
    this.connection.takeKeyboard();
  }

  releaseKeyboard(): void {
    this.connection.releaseKeyboard();
  }

  /** Gives the guest's terminal this window's size (through the VM's agent; nothing is typed). */
  fitGuest(): void {
    const size = this.windowSize();
    this.stopAutomaticFitRetries();
    this.automaticFit.last = false;
    if (size) this.connection.fitGuest(size.cols, size.rows);
    this.focus();
  }

  changeFontSize(delta: number): void {
    const fontSize = clampFontSize(this.local.fontSize + delta);
    this.terminal.options.fontSize = fontSize;
    saveFontSize(fontSize);
    this.setLocal({ fontSize });
    this.showBottom();
    this.autoFit.windowResized();
  }

  setScreenReaderMode(on: boolean): void {
    this.terminal.options.screenReaderMode = on;
    saveScreenReaderMode(on);
    this.setLocal({ screenReaderMode: on });
  }

  pressKey(key: BarKey | "ctrl"): void {
    if (key === "ctrl") {
      this.setLocal({ ctrlArmed: !this.local.ctrlArmed });
    } else {
      this.setLocal({ ctrlArmed: false });
      this.connection.sendText(sequenceFor(key, this.terminal.modes.applicationCursorKeysMode));
    }
    this.focus();
  }

  confirmPaste(): void {
    const pending = this.local.pendingPaste;
    this.setLocal({ pendingPaste: null });
    if (pending) this.terminal.paste(pending.text);
    this.focus();
  }

  cancelPaste(): void {
    this.setLocal({ pendingPaste: null });
    this.focus();
  }

  dispose(): void {
    this.stopAutomaticFitRetries();
    for (const dispose of this.disposers) dispose();
    this.connection.dispose();
    this.terminal.dispose();
    this.listeners.clear();
  }

  private type(data: string): void {
    if (this.local.ctrlArmed) {
      this.setLocal({ ctrlArmed: false });
      this.connection.sendText(withControl(data));
    } else {
      this.connection.sendText(data);
    }
  }

  private requestPaste(text: string): void {
    if (text === "" || !this.state.keyboard?.canType) return;
    if (pasteNeedsConfirmation(text)) this.setLocal({ pendingPaste: { text, lines: lineCount(text) } });
    // paste() applies the guest's bracketed-paste mode and line endings, then arrives at onData.
    else this.terminal.paste(text);
  }

  private interceptPaste(event: ClipboardEvent): void {
    event.preventDefault();
    event.stopPropagation();
    this.requestPaste(event.clipboardData?.getData("text/plain") ?? "");
  }

  private copyOnSelect(): void {
    if (this.terminal.hasSelection()) writeClipboard(this.terminal.getSelection());
  }

  /** Ctrl+Shift+C copies and Ctrl+Shift+V pastes, as in desktop terminals (Ctrl+C is the guest's). */
  private clipboardKeys(event: KeyboardEvent): boolean {
    if (!event.ctrlKey || !event.shiftKey || (event.code !== "KeyC" && event.code !== "KeyV")) return true;
    if (event.type === "keydown") {
      // Chromium would open the developer tools on Ctrl+Shift+C.
      event.preventDefault();
      if (event.code === "KeyC") writeClipboard(this.terminal.getSelection());
      else
        void navigator.clipboard?.readText().then(
          (text) => this.requestPaste(text),
          () => {},
        );
    }
    return false;
  }

  private showBottom(): void {
    this.host.scrollTo({ top: this.host.scrollHeight });
  }

  /** The columns and rows this window's box holds at the current text size; none while hidden. */
  private windowSize(): { cols: number; rows: number } | undefined {
    const proposed = this.fitAddon.proposeDimensions();
    if (!proposed || !Number.isFinite(proposed.cols) || !Number.isFinite(proposed.rows)) return undefined;
    return {
      cols: clamp(proposed.cols, guestSizeLimits.minCols, guestSizeLimits.maxCols),
      rows: clamp(proposed.rows, guestSizeLimits.minRows, guestSizeLimits.maxRows),
    };
  }

  /** Only the keyboard holder's window drives the guest's size (the BFF ignores anyone else's). */
  private fitAutomatically(): void {
    const { status, keyboard, guestSize } = this.connection.getState();
    if (status.kind !== "connected" || !keyboard?.canType || document.hidden) return;
    const size = this.windowSize();
    if (!size || (guestSize && size.cols === guestSize.cols && size.rows === guestSize.rows)) return;
    this.automaticFit.last = true;
    this.connection.fitGuest(size.cols, size.rows);
  }

  /** The failure to show: none while an automatic fit is still being asked again. */
  private shownFitFailure(failure: ConsoleState["fitFailure"]): ConsoleState["fitFailure"] {
    const automatic = this.automaticFit;
    const retrying =
      failure === "agent-unreachable" &&
      automatic.last &&
      this.drivesSize &&
      performance.now() < automatic.giveUpAt;
    if (!retrying) return failure;
    automatic.timer ??= setTimeout(() => {
      automatic.timer = undefined;
      this.fitAutomatically();
    }, automaticFitRetryMs);
    return null;
  }

  private stopAutomaticFitRetries(): void {
    clearTimeout(this.automaticFit.timer);
    this.automaticFit.timer = undefined;
  }

  /** Shows the guest's size, in the order of the output around it: what came before is at the old size. */
  private showGuestSize(size: { cols: number; rows: number }): void {
    if (size.cols === this.shownSize.cols && size.rows === this.shownSize.rows) return;
    this.shownSize = size;
    this.terminal.write(emptyWrite, () => this.terminal.resize(size.cols, size.rows));
  }

  private setLocal(change: Partial<LocalState>): void {
    this.local = { ...this.local, ...change };
    this.refresh();
  }

  private refresh(): void {
    const connectionState = this.connection.getState();
    if (connectionState.guestSize) this.showGuestSize(connectionState.guestSize);
    const drivesSize = connectionState.status.kind === "connected" && !!connectionState.keyboard?.canType;
    if (drivesSize && !this.drivesSize) {
      this.automaticFit.giveUpAt = performance.now() + automaticFitRetryForMs;
      this.autoFit.windowResized();
    }
    if (!drivesSize) this.stopAutomaticFitRetries();
    this.drivesSize = drivesSize;
    this.terminal.options.disableStdin = !connectionState.keyboard?.canType;
    this.state = {
      ...connectionState,
      fitFailure: this.shownFitFailure(connectionState.fitFailure),
      ...this.local,
    };
    for (const listener of this.listeners) listener();
  }
}

function writeClipboard(text: string): void {
  // Refused without focus or permission: copying is a convenience, never an error to show.
  if (text) void navigator.clipboard?.writeText(text).catch(() => {});
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function disposable(handle: { dispose(): void }): () => void {
  return () => handle.dispose();
}

function listen(
  target: EventTarget,
  type: string,
  handler: (event: Event) => void,
  options: AddEventListenerOptions = {},
): () => void {
  target.addEventListener(type, handler, options);
  return () => target.removeEventListener(type, handler, options);
}

function observeSize(element: Element, onResize: () => void): () => void {
  const observer = new ResizeObserver(onResize);
  observer.observe(element);
  return () => observer.disconnect();
}
