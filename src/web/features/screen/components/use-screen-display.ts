import { useEffect, useState, useSyncExternalStore, type RefObject } from "react";
import { ScreenDisplay, type ScreenDisplayState } from "../lib/screen-display.ts";

/** Creates the screen in `hostRef`'s element for as long as the component shows it. */
export function useScreenDisplay(
  hostRef: RefObject<HTMLElement | null>,
  stillRef: RefObject<HTMLCanvasElement | null>,
  url: string,
): ScreenDisplay | null {
  const [display, setDisplay] = useState<ScreenDisplay | null>(null);
  useEffect(() => {
    const host = hostRef.current;
    const still = stillRef.current;
    if (!host || !still) return;
    const created = new ScreenDisplay(host, still, url);
    setDisplay(created);
    return () => {
      created.dispose();
      setDisplay(null);
    };
  }, [hostRef, stillRef, url]);
  return display;
}

const noSubscription = () => () => {};

export function useScreenState(display: ScreenDisplay | null): ScreenDisplayState | null {
  return useSyncExternalStore(display?.subscribe ?? noSubscription, () => display?.getState() ?? null);
}
