import type { MouseEvent } from "react";
import type { ConsoleTerminal } from "../lib/console-terminal.ts";
import type { BarKey } from "../lib/terminal-keys.ts";

const keys: { key: BarKey; label: string; name: string }[] = [
  { key: "escape", label: "Esc", name: "Escape" },
  { key: "tab", label: "Tab", name: "Tab" },
  { key: "left", label: "←", name: "Left arrow" },
  { key: "up", label: "↑", name: "Up arrow" },
  { key: "down", label: "↓", name: "Down arrow" },
  { key: "right", label: "→", name: "Right arrow" },
];

// Pressing a key must not take focus from the terminal, or a phone would hide its keyboard.
const keepFocus = (event: MouseEvent) => event.preventDefault();

/** The keys a phone's keyboard lacks; shown on narrow screens only (console.css). */
export function KeyBar({ terminal, ctrlArmed }: { terminal: ConsoleTerminal; ctrlArmed: boolean }) {
  return (
    <div className="console-keys" role="toolbar" aria-label="Extra keys">
      {keys.slice(0, 2).map(({ key, label, name }) => (
        <button
          key={key}
          type="button"
          aria-label={name}
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
        Ctrl
      </button>
      {keys.slice(2).map(({ key, label, name }) => (
        <button
          key={key}
          type="button"
          aria-label={name}
          onMouseDown={keepFocus}
          onClick={() => terminal.pressKey(key)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}
