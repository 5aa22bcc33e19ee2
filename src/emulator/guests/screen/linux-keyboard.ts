// The keyboard of a Linux console, as a VNC client's key events reach it: X11 keysyms, pressed and
// released. QEMU turns them into the PC keyboard's scancodes and the guest's keyboard driver
// (drivers/tty/vt/keyboard.c) turns those into bytes for the tty with Debian's default keymap. This
// does the same in one step: the characters (UTF-8, as console-setup puts the console in Unicode
// mode), BackSpace as DEL, the cursor and editing keys as the console's escape sequences
// (console_codes(4)), Control with a letter as its control character, Alt as an ESC before the key
// (the driver's meta mode, on by default), and Control+Alt+Delete as the "Boot" key, which the
// kernel hands to init (ctrl_alt_del() in kernel/reboot.c).

const modifiers = {
  control: [0xffe3, 0xffe4],
  alt: [0xffe9, 0xffea, 0xffe7, 0xffe8], // Alt_L/R and Meta_L/R: both the PC's Alt keys
} as const;

/** Keys whose bytes do not depend on the modifiers (bar Alt's ESC). */
const fixed = new Map<number, string>([
  [0xff0d, "\r"], // Return
  [0xff8d, "\r"], // KP_Enter
  [0xff08, "\x7f"], // BackSpace: the keymap's Delete
  [0xff09, "\t"], // Tab
  [0xfe20, "\t"], // ISO_Left_Tab (Shift+Tab)
  [0xff1b, "\x1b"], // Escape
  [0xff50, "\x1b[1~"], // Home
  [0xff57, "\x1b[4~"], // End
  [0xff63, "\x1b[2~"], // Insert
  [0xffff, "\x1b[3~"], // Delete
  [0xff55, "\x1b[5~"], // Page_Up
  [0xff56, "\x1b[6~"], // Page_Down
  [0xffbe, "\x1b[[A"], // F1-F5
  [0xffbf, "\x1b[[B"],
  [0xffc0, "\x1b[[C"],
  [0xffc1, "\x1b[[D"],
  [0xffc2, "\x1b[[E"],
  [0xffc3, "\x1b[17~"], // F6-F12
  [0xffc4, "\x1b[18~"],
  [0xffc5, "\x1b[19~"],
  [0xffc6, "\x1b[20~"],
  [0xffc7, "\x1b[21~"],
  [0xffc8, "\x1b[23~"],
  [0xffc9, "\x1b[24~"],
]);

/** Up, Down, Right, Left: the final byte after ESC [ (or ESC O in application cursor mode). */
const arrows = new Map<number, string>([
  [0xff52, "A"],
  [0xff54, "B"],
  [0xff53, "C"],
  [0xff51, "D"],
]);

/** The Boot key: Delete or the keypad's Delete with Control and Alt held. */
const deleteKeys = new Set([0xffff, 0xff9f]);

export type KeyOutcome = { bytes: string } | { ctrlAltDel: true } | undefined;

export class LinuxKeyboard {
  private readonly held = new Set<number>();

  /**
   * A key event; what the tty gets for it, if anything. `applicationCursorKeys` is the terminal's
   * DECCKM mode, which the console keeps for the keyboard.
   */
  event(keysym: number, down: boolean, applicationCursorKeys = false): KeyOutcome {
    if (!down) {
      this.held.delete(keysym);
      return undefined;
    }
    const control = modifiers.control.some((key) => this.held.has(key));
    const alt = modifiers.alt.some((key) => this.held.has(key));
    if ([...modifiers.control, ...modifiers.alt].includes(keysym as never)) {
      this.held.add(keysym);
      return undefined;
    }
    if (control && alt && deleteKeys.has(keysym)) return { ctrlAltDel: true };
    const bytes = this.bytesOf(keysym, control, applicationCursorKeys);
    if (bytes === undefined) return undefined;
    return { bytes: alt ? `\x1b${bytes}` : bytes };
  }

  private bytesOf(keysym: number, control: boolean, applicationCursorKeys: boolean): string | undefined {
    const arrow = arrows.get(keysym);
    if (arrow) return `${applicationCursorKeys ? "\x1bO" : "\x1b["}${arrow}`;
    const known = fixed.get(keysym);
    if (known) return known;
    const character = characterOf(keysym);
    if (character === undefined) return undefined;
    return control ? controlCharacter(character) : character;
  }
}

/** Latin-1 keysyms are their characters; 0x01000000 + U is Unicode U (X11's keysymdef.h). */
function characterOf(keysym: number): string | undefined {
  if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff)) {
    return String.fromCharCode(keysym);
  }
  if (keysym >= 0x1000100 && keysym <= 0x110ffff) return String.fromCodePoint(keysym - 0x1000000);
  return undefined;
}

/** Control with a key: @ A-Z [ \ ] ^ _ (either case) to 0-31, ? to DEL, space to NUL. */
function controlCharacter(character: string): string {
  if (character === " ") return "\x00";
  if (character === "?") return "\x7f";
  const code = character.toUpperCase().charCodeAt(0);
  return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : character;
}
