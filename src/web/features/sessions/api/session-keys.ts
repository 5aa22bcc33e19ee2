import type { SessionFilters } from "./get-sessions.ts";

// General to specific, so invalidating ["sessions"] refreshes every list and detail at once.
export const sessionKeys = {
  all: ["sessions"] as const,
  lists: () => [...sessionKeys.all, "list"] as const,
  list: (filters: SessionFilters) => [...sessionKeys.lists(), filters] as const,
  details: () => [...sessionKeys.all, "detail"] as const,
  detail: (sessionId: string) => [...sessionKeys.details(), sessionId] as const,
  /** The person's ended sessions, asked again whenever the set of their live ones (`liveIds`) changes. */
  past: (liveIds: string) => [...sessionKeys.all, "past", liveIds] as const,
};
