import { isLanguage, matchLanguage, type Language } from "./languages.ts";

// The choice made with the switcher outlives the tab and the sign-in: it belongs to the browser,
// like the browser's own language setting that it overrides.
const storageKey = "lab-console.language";

/** The language someone chose before, or else the first of their browser's that we have. */
export function initialLanguage(): Language {
  return storedLanguage() ?? matchLanguage(navigator.languages);
}

export function storeLanguage(language: Language): void {
  try {
    localStorage.setItem(storageKey, language);
  } catch {
    // Storage can be off (private windows, policies): the choice then lasts as long as the page.
  }
}

function storedLanguage(): Language | null {
  try {
    const stored = localStorage.getItem(storageKey);
    return isLanguage(stored) ? stored : null;
  } catch {
    return null;
  }
}
