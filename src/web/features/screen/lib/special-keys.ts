// The keys a browser cannot send into a VM's screen: the browser or the person's own machine takes
// Ctrl+Alt+Del, most F-keys and Ctrl+Alt+F1-F6 (a Linux desktop's switch to a text console) before the
// page sees them. The screen's menu sends them as RFB key events: X11 keysyms (keysymdef.h, as
// noVNC's core/input/keysym.js has them) with the physical key's code, which noVNC turns into a
// scancode when the server takes QEMU's extended key events.

export interface KeyStroke {
  keysym: number;
  /** KeyboardEvent.code of the key. */
  code: string;
  down: boolean;
}

export const keysyms = {
  controlLeft: 0xffe3,
  altLeft: 0xffe9,
  delete: 0xffff,
  /** F1; F2-F12 follow it. */
  f1: 0xffbe,
} as const;

export type FunctionKey = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12;

export type SpecialKey =
  | { kind: "ctrl-alt-del" }
  | { kind: "function"; number: FunctionKey }
  /** Ctrl+Alt+F1-F6: the virtual terminals of a Linux desktop. */
  | { kind: "ctrl-alt-function"; number: FunctionKey };

/** The menu, in order. */
export const specialKeys: readonly SpecialKey[] = [
  { kind: "ctrl-alt-del" },
  ...functionNumbers(12).map((number) => ({ kind: "function", number }) as const),
  ...functionNumbers(6).map((number) => ({ kind: "ctrl-alt-function", number }) as const),
];

/** As keyboards print it; the same in every language. */
export function specialKeyLabel(key: SpecialKey): string {
  if (key.kind === "ctrl-alt-del") return "Ctrl+Alt+Del";
  return key.kind === "function" ? `F${key.number}` : `Ctrl+Alt+F${key.number}`;
}

/** Presses and releases, in order: modifiers down, the key down and up, modifiers up in reverse. */
export function keyStrokes(key: SpecialKey): KeyStroke[] {
  const main = key.kind === "ctrl-alt-del" ? deleteKey : functionKey(key.number);
  const modifiers = key.kind === "function" ? [] : [controlKey, altKey];
  return [
    ...modifiers.map((each) => ({ ...each, down: true })),
    { ...main, down: true },
    { ...main, down: false },
    ...modifiers.toReversed().map((each) => ({ ...each, down: false })),
  ];
}

const controlKey = { keysym: keysyms.controlLeft, code: "ControlLeft" };
const altKey = { keysym: keysyms.altLeft, code: "AltLeft" };
const deleteKey = { keysym: keysyms.delete, code: "Delete" };

function functionKey(number: FunctionKey) {
  return { keysym: keysyms.f1 + number - 1, code: `F${number}` };
}

function functionNumbers(count: number): FunctionKey[] {
  return Array.from({ length: count }, (_, index) => (index + 1) as FunctionKey);
}
