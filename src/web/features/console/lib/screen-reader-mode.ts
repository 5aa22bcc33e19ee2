// xterm.js's screen-reader mode, kept per browser like the font size: it keeps an accessible copy of
// the screen and reads new output aloud, which costs time on every write, so it is a choice.

const storageKey = "lab-console.console-screen-reader";

export function loadScreenReaderMode(
  storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage,
): boolean {
  return storage?.getItem(storageKey) === "on";
}

export function saveScreenReaderMode(
  on: boolean,
  storage: Pick<Storage, "setItem"> | undefined = globalThis.localStorage,
): void {
  try {
    storage?.setItem(storageKey, on ? "on" : "off");
  } catch {
    // Private browsing may refuse storage: the choice then lasts for this page only.
  }
}
