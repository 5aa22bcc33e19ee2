import { queryOptions, useQuery } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { isApiError } from "../../../lib/api-error.ts";
import { sessionKeys } from "./session-keys.ts";
import { sessionPollMs } from "./session-polling.ts";

export function getSession(sessionId: string, signal?: AbortSignal): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}`, { schema: Session, signal });
}

export const sessionQueryOptions = (sessionId: string) =>
  queryOptions({
    queryKey: sessionKeys.detail(sessionId),
    queryFn: ({ signal }) => getSession(sessionId, signal),
    refetchInterval: (query) =>
      isApiError(query.state.error, 404) ? false : sessionPollMs(query.state.data),
  });

export function useSession(sessionId: string) {
  return useQuery(sessionQueryOptions(sessionId));
}
