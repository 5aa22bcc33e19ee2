import "@xterm/xterm/css/xterm.css";
import "./console.css";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { consoleUrl } from "../api/console-url.ts";
import { BlankScreenHint } from "./blank-screen-hint.tsx";
import { ConsoleToolbar } from "./console-toolbar.tsx";
import { KeyBar } from "./key-bar.tsx";
import { PasteDialog } from "./paste-dialog.tsx";
import { useConsoleState, useConsoleTerminal } from "./use-console-terminal.ts";

export interface ConsoleViewProps {
  sessionId: string;
  observe: boolean;
  /** One of the lab's terminals; the serial console without it. */
  terminal?: number;
  /** Told whenever the live console becomes connected or stops being so (the page's boot log follows it). */
  onConnectionChange?: (connected: boolean) => void;
}

/** The terminal with its controls. Loaded lazily (see console-panel.tsx). */
export default function ConsoleView({
  sessionId,
  observe,
  terminal: terminalNumber,
  onConnectionChange,
}: ConsoleViewProps) {
  const { t } = useTranslation();
  const hostRef = useRef<HTMLDivElement>(null);
  const terminal = useConsoleTerminal(hostRef, consoleUrl(sessionId, observe, terminalNumber));
  const state = useConsoleState(terminal);
  const connected = state?.status.kind === "connected";
  useEffect(() => onConnectionChange?.(connected), [connected, onConnectionChange]);

  return (
    <section
      className="console"
      aria-label={
        terminalNumber === undefined
          ? t("console.title")
          : t("console.tabs.terminal", { number: terminalNumber })
      }
      data-status={state?.status.kind ?? "connecting"}
      data-mode={observe ? "observe" : "interactive"}
    >
      {terminal && state && <ConsoleToolbar terminal={terminal} state={state} observe={observe} />}
      {state && <BlankScreenHint state={state} />}
      <div ref={hostRef} className="console-screen" data-testid="console-screen" translate="no" />
      {terminal && state?.keyboard?.canType && <KeyBar terminal={terminal} ctrlArmed={state.ctrlArmed} />}
      {terminal && <PasteDialog terminal={terminal} pending={state?.pendingPaste ?? null} />}
    </section>
  );
}
