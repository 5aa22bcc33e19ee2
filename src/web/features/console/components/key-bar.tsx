import type { MouseEvent } from "react";
import { useTranslation } from "react-i18next";
import type { ConsoleTerminal } from "../lib/console-terminal.ts";
import type { BarKey } from "../lib/terminal-keys.ts";

// Labels as keyboards print them; names (console.keys.*) as screen readers should say them.
const keys: { key: BarKey; label: string }[] = [
  { key: "escape", label: "Esc" },
  { key: "tab", label: "Tab" },
  { key: "left", label: "←" },
  { key: "up", label: "↑" },
  { key: "down", label: "↓" },
  { key: "right", label: "→" },
];

// Pressing a key must not take focus from the terminal, or a phone would hide its keyboard.
const keepFocus = (event: MouseEvent) => event.preventDefault();

/** The keys a phone's keyboard lacks; shown on narrow screens only (console.css). */
export function KeyBar({ terminal, ctrlArmed }: { terminal: ConsoleTerminal; ctrlArmed: boolean }) {
  const { t } = useTranslation();
  return (
    <div className="console-keys" role="toolbar" aria-label={t("console.keys.label")}>
      {keys.slice(0, 2).map(({ key, label }) => (
        <button
          key={key}
          type="button"
          aria-label={t(`console.keys.${key}`)}
          onMouseDown={keepFocus}
          onClick={() => terminal.pressKey(key)}
        >
          {label}
        </button>
      ))}
      <button
        type="button"
        aria-pressed={ctrlArmed}
        onMouseDown={keepFocus}
        onClick={() => terminal.pressKey("ctrl")}
      >
        {t("console.keys.ctrlLabel")}
      </button>
      {keys.slice(2).map(({ key, label }) => (
        <button
          key={key}
          type="button"
          aria-label={t(`console.keys.${key}`)}
          onMouseDown={keepFocus}
          onClick={() => terminal.pressKey(key)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}
