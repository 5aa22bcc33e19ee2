// The class wall's live data for a page: one WallConnection per lab, for as long as the page shows it.
import { useEffect, useState, useSyncExternalStore } from "react";
import { WallConnection, type WallData } from "../lib/wall-connection.ts";

/** The wall's path on the page's host; ReconnectingSocket adds ws: or wss:. */
export function wallUrl(labId: string): string {
  return `/api/labs/${encodeURIComponent(labId)}/wall`;
}

const beforeConnecting: WallData = { state: "connecting", sessions: undefined, screens: new Map() };
const noSubscription = () => () => {};

export function useWallStream(labId: string): WallData {
  const [connection, setConnection] = useState<WallConnection | null>(null);
  useEffect(() => {
    const created = new WallConnection(wallUrl(labId));
    created.start();
    setConnection(created);
    return () => {
      created.dispose();
      setConnection(null);
    };
  }, [labId]);
  return useSyncExternalStore(
    connection?.subscribe ?? noSubscription,
    () => connection?.getState() ?? beforeConnecting,
  );
}
