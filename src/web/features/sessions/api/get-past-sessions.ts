import { useQuery } from "@tanstack/react-query";
import { PastSessionList, type Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

export function getPastSessions(signal?: AbortSignal): Promise<PastSessionList> {
  return apiRequest("/past-sessions", { schema: PastSessionList, signal });
}

/**
 * The person's ended sessions. They change only when a session ends, which the live list (polled
 * already) shows as one gone from it: the key follows the live ones, so nothing more is polled.
 */
export function usePastSessions(live: Session[]) {
  const liveIds = live
    .map((session) => session.id)
    .toSorted()
    .join(" ");
  return useQuery({
    queryKey: sessionKeys.past(liveIds),
    queryFn: ({ signal }) => getPastSessions(signal),
  });
}
