// The class wall's live data for a page: one WallConnection per lab, for as long as the page shows it.
import { useEffect, useState, useSyncExternalStore } from "react";
import type { WallSearch } from "../../../../common/wall-protocol.ts";
import { initialWallData, WallConnection, type WallData } from "../lib/wall-connection.ts";

/** The wall's path on the page's host; ReconnectingSocket adds ws: or wss:. */
export function wallUrl(labId: string): string {
  return `/api/labs/${encodeURIComponent(labId)}/wall`;
}

const noSubscription = () => () => {};

/** `search`: what the BFF is to search the screens for; a new value is sent as it comes. */
export function useWallStream(labId: string, search: WallSearch): WallData {
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
  const { query, regex, matchCase } = search;
  useEffect(() => connection?.setSearch({ query, regex, matchCase }), [connection, query, regex, matchCase]);
  return useSyncExternalStore(
    connection?.subscribe ?? noSubscription,
    () => connection?.getState() ?? initialWallData,
  );
}
