// Text an input method commits without a composition, sent to the guest once and in the order typed.
//
// IMEs commit some text as a plain `insertText` rather than as a composition: full-width punctuation
// (「，」「。」), a candidate picked by number, the emoji picker, dictation. xterm.js 6 reads that text
// two ways at once, and which wins is a race: the keydown of a key the IME takes (keyCode 229)
// schedules a look at its textarea a task later, and the `input` event sends the text too, unless a
// key is still down. An IME that commits after the key is up (IBus and Fcitx on Linux do) gets the
// text sent twice; one that commits while it is down, before that look, gets it dropped. In screen
// reader mode xterm.js ignores those input events, so text that comes with no key is lost. And text
// sent at once overtakes a composition committed just before it, which xterm.js sends a task later:
// "你好，" reached the guest as "，你好，".
//
// So this takes `insertText` from xterm.js: it cancels the `beforeinput` (the text never enters the
// textarea, so xterm.js's look finds nothing new and its input handler gets no event) and sends the
// text itself, after any composition xterm.js is still sending: as soon as the terminal has sent
// something (xterm.js sends the composition before any key typed after it), or a task after
// xterm.js's own send. Compositions stay xterm.js's: they arrive as `insertCompositionText`, which
// this leaves alone, as it leaves the text of a key xterm.js handled itself (in screen reader mode
// the browser still types those into the textarea).

/** The keyCode browsers give every key an IME takes for itself. */
const imeKeyCode = 229;

/** What these listeners read of the events (KeyboardEvent, InputEvent): the DOM's names. */
type InputLikeEvent = Event & {
  keyCode?: number;
  inputType?: string;
  data?: string | null;
  isComposing?: boolean;
};

export class CommittedText {
  /** The key down now: none, one the IME took, or one xterm.js reads itself. */
  private keyDown: "none" | "ime" | "other" = "none";
  /** xterm.js sends a finished composition a task after compositionend: text typed since waits. */
  private compositionSending: ReturnType<typeof setTimeout> | undefined;
  private waiting: string[] = [];
  private readonly listening = new AbortController();

  /** `host`: the element xterm.js opened in; `send`: types text as the terminal's own input. */
  constructor(
    host: EventTarget,
    private readonly send: (text: string) => void,
  ) {
    const { signal } = this.listening;
    const on = (type: string, listener: (event: InputLikeEvent) => void, capture: boolean) =>
      host.addEventListener(type, listener as EventListener, { capture, signal });
    on("keydown", (event) => (this.keyDown = event.keyCode === imeKeyCode ? "ime" : "other"), true);
    on("keyup", () => (this.keyDown = "none"), true);
    // Bubbling, so this runs after xterm.js's own listener on its textarea and its timer after xterm.js's.
    on("compositionend", () => this.awaitCompositionSend(), false);
    // Capturing, so xterm.js never sees the text this takes.
    on("beforeinput", (event) => this.take(event), true);
  }

  /**
   * The terminal sent input (call it after the input went out): a composition xterm.js was still
   * sending is out now, so the text that waited for it follows.
   */
  terminalSent(): void {
    if (this.compositionSending !== undefined) this.sendWaiting();
  }

  dispose(): void {
    clearTimeout(this.compositionSending);
    this.listening.abort();
  }

  private take(event: InputLikeEvent): void {
    if (event.inputType !== "insertText" || event.isComposing || !event.data) return;
    // A commit the browser will not let go of (some Android keyboards) stays xterm.js's, as before:
    // sent here too, it would reach the guest twice.
    if (this.keyDown === "other" || !event.cancelable) return;
    event.preventDefault();
    if (this.compositionSending === undefined) this.send(event.data);
    else this.waiting.push(event.data);
  }

  private awaitCompositionSend(): void {
    clearTimeout(this.compositionSending);
    this.compositionSending = setTimeout(() => this.sendWaiting(), 0);
  }

  private sendWaiting(): void {
    clearTimeout(this.compositionSending);
    this.compositionSending = undefined;
    const waiting = this.waiting.join("");
    this.waiting = [];
    if (waiting) this.send(waiting);
  }
}
