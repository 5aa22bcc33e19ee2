import { useEffect, useState, useSyncExternalStore, type RefObject } from "react";
import { useTranslation } from "react-i18next";
import { ConsoleTerminal, type ConsoleTerminalState } from "../lib/console-terminal.ts";

/** Creates the terminal in `hostRef`'s element for as long as the component shows it. */
export function useConsoleTerminal(
  hostRef: RefObject<HTMLElement | null>,
  url: string,
): ConsoleTerminal | null {
  const { i18n } = useTranslation();
  const [terminal, setTerminal] = useState<ConsoleTerminal | null>(null);
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    // Read when written, so a line after a language switch is in the new language.
    const created = new ConsoleTerminal(host, url, { outputLost: () => i18n.t("console.outputLost") });
    setTerminal(created);
    return () => {
      created.dispose();
      setTerminal(null);
    };
  }, [hostRef, url, i18n]);
  return terminal;
}

const noSubscription = () => () => {};

export function useConsoleState(terminal: ConsoleTerminal | null): ConsoleTerminalState | null {
  return useSyncExternalStore(terminal?.subscribe ?? noSubscription, () => terminal?.getState() ?? null);
}
