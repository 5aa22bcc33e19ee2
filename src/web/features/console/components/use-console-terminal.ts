import { useEffect, useState, useSyncExternalStore, type RefObject } from "react";
import { ConsoleTerminal, type ConsoleTerminalState } from "../lib/console-terminal.ts";

/** Creates the terminal in `hostRef`'s element for as long as the component shows it. */
export function useConsoleTerminal(
  hostRef: RefObject<HTMLElement | null>,
  url: string,
): ConsoleTerminal | null {
  const [terminal, setTerminal] = useState<ConsoleTerminal | null>(null);
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const created = new ConsoleTerminal(host, url);
    setTerminal(created);
    return () => {
      created.dispose();
      setTerminal(null);
    };
  }, [hostRef, url]);
  return terminal;
}

const noSubscription = () => () => {};

export function useConsoleState(terminal: ConsoleTerminal | null): ConsoleTerminalState | null {
  return useSyncExternalStore(terminal?.subscribe ?? noSubscription, () => terminal?.getState() ?? null);
}
