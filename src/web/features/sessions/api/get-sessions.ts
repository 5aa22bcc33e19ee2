import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import { SessionList, type SessionStatus } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";
import { sessionListPollMs } from "./session-polling.ts";

export interface SessionFilters {
  lab?: string;
  status?: SessionStatus;
  owner?: string;
  page?: number;
  pageSize?: number;
}

export function getSessions(filters: SessionFilters, signal?: AbortSignal): Promise<SessionList> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const query = search.size > 0 ? `?${search}` : "";
  return apiRequest(`/sessions${query}`, { schema: SessionList, signal });
}

export const sessionsQueryOptions = (filters: SessionFilters) =>
  queryOptions({
    queryKey: sessionKeys.list(filters),
    queryFn: ({ signal }) => getSessions(filters, signal),
    refetchInterval: (query) => sessionListPollMs(query.state.data),
    // While the next page or filter loads, keep showing the last rows instead of blanking the table.
    placeholderData: keepPreviousData,
  });

export function useSessions(filters: SessionFilters) {
  return useQuery(sessionsQueryOptions(filters));
}
