// A paste as the key presses that type it, and the typist that presses them. A VM's screen has no clipboard a browser can reach, so
// text arrives as a keyboard would send it: QEMU turns each X11 keysym into the scancode of the key
// that has it on its (US) keymap and does not press Shift itself, so a character that needs Shift
// gets Shift around it, as a person's fingers would.

export interface KeyStroke {
  keysym: number;
  down: boolean;
}

const shiftKeysym = 0xffe1;
const returnKeysym = 0xff0d;
const tabKeysym = 0xff09;
/** The characters a US keyboard types with Shift held. */
const shifted = new Set('~!@#$%^&*()_+{}|:"<>?ABCDEFGHIJKLMNOPQRSTUVWXYZ');

/** The keystrokes that type `text`, or the first character a keyboard cannot type. */
export function keystrokesOf(text: string): { strokes: KeyStroke[][] } | { untypable: string } {
  const strokes: KeyStroke[][] = [];
  for (const character of text.replace(/\r\n?/g, "\n")) {
    const keysym = keysymOf(character);
    if (keysym === undefined) return { untypable: character };
    const press = [
      { keysym, down: true },
      { keysym, down: false },
    ];
    strokes.push(
      shifted.has(character)
        ? [{ keysym: shiftKeysym, down: true }, ...press, { keysym: shiftKeysym, down: false }]
        : press,
    );
  }
  return { strokes };
}

function keysymOf(character: string): number | undefined {
  if (character === "\n") return returnKeysym;
  if (character === "\t") return tabKeysym;
  const code = character.codePointAt(0)!;
  // Printable ASCII: its keysym is its own code.
  return code >= 0x20 && code <= 0x7e ? code : undefined;
}

/**
 * Types one paste at a time, a character every `intervalMs`: QEMU's PS/2 keyboard queues 16 bytes
 * and drops what does not fit, so keys go no faster than a slow guest takes them.
 */
export class PasteTypist {
  private timer: NodeJS.Timeout | undefined;
  private finish: (() => void) | undefined;

  constructor(private readonly intervalMs: number) {}

  get busy(): boolean {
    return this.finish !== undefined;
  }

  /**
   * Presses each character's keys through `press` (undefined ends the paste early: the line to the
   * VM is gone, or its typist may no longer type); `done` hears how many characters were typed.
   */
  type(
    strokes: readonly KeyStroke[][],
    press: () => ((stroke: KeyStroke) => void) | undefined,
    done: (typed: number) => void,
  ): void {
    let next = 0;
    this.finish = () => {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.finish = undefined;
      done(next);
    };
    const typeNext = () => {
      const pressKey = press();
      const character = strokes[next];
      if (!pressKey || !character) {
        this.finish?.();
        return;
      }
      for (const stroke of character) pressKey(stroke);
      next += 1;
      this.timer = setTimeout(typeNext, this.intervalMs);
    };
    typeNext();
  }

  /** Ends the paste where it is; its `done` hears how far it got. */
  stop(): void {
    this.finish?.();
  }
}
