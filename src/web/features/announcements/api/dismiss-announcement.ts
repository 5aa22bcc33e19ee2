import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { AnnouncementList } from "../../../../common/announcements-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { announcementKeys } from "./announcement-keys.ts";

export function dismissAnnouncement(sessionId: string, announcementId: string): Promise<void> {
  return apiRequest(
    `/sessions/${encodeURIComponent(sessionId)}/announcements/${encodeURIComponent(announcementId)}/dismiss`,
    { method: "POST" },
  );
}

/** Dismisses one for the student; it leaves the page at once rather than on the next poll. */
export function useDismissAnnouncement(sessionId: string) {
  const queryClient = useQueryClient();
  const key = announcementKeys.ofSession(sessionId);
  return useMutation({
    mutationFn: (announcementId: string) => dismissAnnouncement(sessionId, announcementId),
    onSuccess: (_, announcementId) => {
      queryClient.setQueryData<AnnouncementList>(
        key,
        (list) => list && { items: list.items.filter((item) => item.id !== announcementId) },
      );
      return queryClient.invalidateQueries({ queryKey: key });
    },
  });
}
