// A paste as the key presses that type it. A VM's screen has no clipboard a browser can reach, so
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
