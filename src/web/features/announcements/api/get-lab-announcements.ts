import { queryOptions, useQuery } from "@tanstack/react-query";
import { AnnouncementList } from "../../../../common/announcements-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { announcementKeys } from "./announcement-keys.ts";

export function getLabAnnouncements(labId: string, signal?: AbortSignal): Promise<AnnouncementList> {
  return apiRequest(`/labs/${encodeURIComponent(labId)}/announcements`, { schema: AnnouncementList, signal });
}

/** What staff sent in a lab (a TA with sections: what reaches their students), newest first. */
export function useLabAnnouncements(labId: string) {
  return useQuery(
    queryOptions({
      queryKey: announcementKeys.ofLab(labId),
      queryFn: ({ signal }) => getLabAnnouncements(labId, signal),
      // Other staff announce too; one's own sending refreshes it at once (send-announcement.ts).
      refetchInterval: 15_000,
    }),
  );
}
