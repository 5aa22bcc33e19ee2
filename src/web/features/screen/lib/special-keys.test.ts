import { describe, expect, it } from "vitest";
import { keyStrokes, specialKeyLabel, specialKeys } from "./special-keys.ts";

const down = (keysym: number, code: string) => ({ keysym, code, down: true });
const up = (keysym: number, code: string) => ({ keysym, code, down: false });

describe("special keys", () => {
  it("offers Ctrl+Alt+Del, F1-F12 and Ctrl+Alt+F1-F6, in that order", () => {
    expect(specialKeys.map(specialKeyLabel)).toEqual([
      "Ctrl+Alt+Del",
      ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
      ...Array.from({ length: 6 }, (_, i) => `Ctrl+Alt+F${i + 1}`),
    ]);
  });

  it("presses Ctrl+Alt+Del as noVNC's sendCtrlAltDel does", () => {
    expect(keyStrokes({ kind: "ctrl-alt-del" })).toEqual([
      down(0xffe3, "ControlLeft"),
      down(0xffe9, "AltLeft"),
      down(0xffff, "Delete"),
      up(0xffff, "Delete"),
      up(0xffe9, "AltLeft"),
      up(0xffe3, "ControlLeft"),
    ]);
  });

  it("sends F1-F12 with X11's keysyms XK_F1 (0xffbe) to XK_F12 (0xffc9) and their key codes", () => {
    expect(keyStrokes({ kind: "function", number: 1 })).toEqual([down(0xffbe, "F1"), up(0xffbe, "F1")]);
    expect(keyStrokes({ kind: "function", number: 12 })).toEqual([down(0xffc9, "F12"), up(0xffc9, "F12")]);
  });

  it("holds Ctrl and Alt around an F-key for a text console, releasing them in reverse", () => {
    expect(keyStrokes({ kind: "ctrl-alt-function", number: 2 })).toEqual([
      down(0xffe3, "ControlLeft"),
      down(0xffe9, "AltLeft"),
      down(0xffbf, "F2"),
      up(0xffbf, "F2"),
      up(0xffe9, "AltLeft"),
      up(0xffe3, "ControlLeft"),
    ]);
  });
});
