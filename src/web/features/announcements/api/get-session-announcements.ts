import { queryOptions, useQuery } from "@tanstack/react-query";
import { AnnouncementList } from "../../../../common/announcements-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { isApiError } from "../../../lib/api-error.ts";
import { announcementKeys } from "./announcement-keys.ts";

// "At once" for a student means within one poll: 5 to 6 s, each tab its own period, so a class that
// opened the page together does not ask in the same second. An unchanged answer is a 304.
const pollMs = 5_000 + Math.round(Math.random() * 1_000);

export function getSessionAnnouncements(sessionId: string, signal?: AbortSignal): Promise<AnnouncementList> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/announcements`, {
    schema: AnnouncementList,
    signal,
  });
}

export const sessionAnnouncementsQueryOptions = (sessionId: string) =>
  queryOptions({
    queryKey: announcementKeys.ofSession(sessionId),
    queryFn: ({ signal }) => getSessionAnnouncements(sessionId, signal),
    // A session that is gone answers 404 and has nothing more to show.
    refetchInterval: (query) => (isApiError(query.state.error, 404) ? false : pollMs),
  });

/** What the session's owner is shown and has not dismissed, newest first. */
export function useSessionAnnouncements(sessionId: string) {
  return useQuery(sessionAnnouncementsQueryOptions(sessionId));
}
