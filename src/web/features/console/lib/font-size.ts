// The console's font size, kept per browser: someone who needs bigger letters needs them every time.

export const fontSizes = { min: 10, max: 28, default: 14, step: 1 } as const;
const storageKey = "lab-console.console-font-size";

export function loadFontSize(
  storage: Pick<Storage, "getItem"> | undefined = globalThis.localStorage,
): number {
  const stored = Number(storage?.getItem(storageKey));
  return Number.isInteger(stored) && stored >= fontSizes.min && stored <= fontSizes.max
    ? stored
    : fontSizes.default;
}

export function saveFontSize(
  size: number,
  storage: Pick<Storage, "setItem"> | undefined = globalThis.localStorage,
): void {
  try {
    storage?.setItem(storageKey, String(size));
  } catch {
    // Private browsing may refuse storage: the size then lasts for this page only.
  }
}

export function clampFontSize(size: number): number {
  return Math.min(fontSizes.max, Math.max(fontSizes.min, Math.round(size)));
}
