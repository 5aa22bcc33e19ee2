import { describe, expect, it } from "vitest";
import { LinuxKeyboard } from "./linux-keyboard.ts";

const Control_L = 0xffe3;
const Alt_L = 0xffe9;
const Delete = 0xffff;

function press(keyboard: LinuxKeyboard, keysym: number, applicationCursorKeys = false) {
  const outcome = keyboard.event(keysym, true, applicationCursorKeys);
  keyboard.event(keysym, false);
  return outcome;
}

describe("a Linux console's keyboard, from X11 keysyms", () => {
  it("sends characters, Return as CR, BackSpace as DEL, and the editing keys as the console does", () => {
    const keyboard = new LinuxKeyboard();
    expect(press(keyboard, "a".charCodeAt(0))).toEqual({ bytes: "a" });
    expect(press(keyboard, "A".charCodeAt(0))).toEqual({ bytes: "A" });
    expect(press(keyboard, 0xe9)).toEqual({ bytes: "é" });
    expect(press(keyboard, 0xff0d)).toEqual({ bytes: "\r" });
    expect(press(keyboard, 0xff08)).toEqual({ bytes: "\x7f" });
    expect(press(keyboard, 0xff09)).toEqual({ bytes: "\t" });
    expect(press(keyboard, 0xff1b)).toEqual({ bytes: "\x1b" });
    expect(press(keyboard, Delete)).toEqual({ bytes: "\x1b[3~" });
    expect(press(keyboard, 0xffe1)).toBeUndefined(); // Shift: the keysym is already uppercase
  });

  it("sends the arrows as ESC [ A, or ESC O A in application cursor mode", () => {
    const keyboard = new LinuxKeyboard();
    expect(press(keyboard, 0xff52)).toEqual({ bytes: "\x1b[A" });
    expect(press(keyboard, 0xff51, true)).toEqual({ bytes: "\x1bOD" });
  });

  it("makes Control with a letter its control character, and Alt an ESC before the key", () => {
    const keyboard = new LinuxKeyboard();
    keyboard.event(Control_L, true);
    expect(press(keyboard, "c".charCodeAt(0))).toEqual({ bytes: "\x03" });
    expect(press(keyboard, "D".charCodeAt(0))).toEqual({ bytes: "\x04" });
    keyboard.event(Control_L, false);
    keyboard.event(Alt_L, true);
    expect(press(keyboard, "b".charCodeAt(0))).toEqual({ bytes: "\x1bb" });
    keyboard.event(Alt_L, false);
    expect(press(keyboard, "c".charCodeAt(0))).toEqual({ bytes: "c" });
  });

  it("takes Control+Alt+Delete as the Boot key, for init, not the tty", () => {
    const keyboard = new LinuxKeyboard();
    keyboard.event(Control_L, true);
    keyboard.event(Alt_L, true);
    expect(keyboard.event(Delete, true)).toEqual({ ctrlAltDel: true });
  });
});
