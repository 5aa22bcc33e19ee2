// The class wall's websocket: the session list and each session's latest screen. The stream runs
// only while the tab is visible (a hidden tab closes it, so the BFF stops its work for it; coming back
// reopens it and gets every screen anew) and reconnects after a drop, backing off up to 15 s.
import { useEffect, useState } from "react";
import { WallServerMessage, type WallScreen, type WallSession } from "../../../../common/wall-protocol.ts";

export type WallState = "connecting" | "live" | "paused" | "reconnecting";

export interface WallData {
  state: WallState;
  sessions: WallSession[] | undefined;
  screens: ReadonlyMap<string, WallScreen>;
}

export function wallUrl(labId: string, location: Location = window.location): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/api/labs/${encodeURIComponent(labId)}/wall`;
}

const firstRetryMs = 500;
const maxRetryMs = 15_000;

export function useWallStream(labId: string): WallData {
  const [data, setData] = useState<WallData>({
    state: "connecting",
    sessions: undefined,
    screens: new Map(),
  });

  useEffect(() => {
    let socket: WebSocket | undefined;
    let retryTimer: number | undefined;
    let retryMs = firstRetryMs;
    let stopped = false;

    const open = () => {
      window.clearTimeout(retryTimer);
      const current = new WebSocket(wallUrl(labId));
      socket = current;
      current.onopen = () => {
        retryMs = firstRetryMs;
        setData((previous) => ({ ...previous, state: "live" }));
      };
      current.onmessage = (event: MessageEvent<string>) => {
        const parsed = WallServerMessage.safeParse(JSON.parse(event.data));
        if (!parsed.success) return;
        const message = parsed.data;
        setData((previous) => {
          if (message.type === "sessions") return { ...previous, sessions: message.items };
          // A new map only for the screens that changed: unchanged miniatures keep their objects.
          const screens = new Map(previous.screens);
          for (const screen of message.screens) screens.set(screen.sessionId, screen);
          return { ...previous, screens };
        });
      };
      current.onclose = () => {
        if (socket !== current || stopped) return;
        socket = undefined;
        if (document.visibilityState === "hidden") return;
        setData((previous) => ({ ...previous, state: "reconnecting" }));
        retryTimer = window.setTimeout(open, retryMs * (0.8 + Math.random() * 0.4));
        retryMs = Math.min(retryMs * 2, maxRetryMs);
      };
    };

    const close = () => {
      window.clearTimeout(retryTimer);
      const current = socket;
      socket = undefined;
      current?.close();
    };

    const onVisibility = () => {
      if (document.visibilityState === "hidden") {
        close();
        setData((previous) => ({ ...previous, state: "paused" }));
      } else if (!socket) {
        setData((previous) => ({ ...previous, state: "connecting" }));
        open();
      }
    };

    if (document.visibilityState !== "hidden") open();
    else setData((previous) => ({ ...previous, state: "paused" }));
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      stopped = true;
      document.removeEventListener("visibilitychange", onVisibility);
      close();
    };
  }, [labId]);

  return data;
}
