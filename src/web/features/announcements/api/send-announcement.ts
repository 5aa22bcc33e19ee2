import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Announcement, type NewAnnouncement } from "../../../../common/announcements-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { announcementKeys } from "./announcement-keys.ts";

export function sendAnnouncement(labId: string, input: NewAnnouncement): Promise<Announcement> {
  return apiRequest(`/labs/${encodeURIComponent(labId)}/announcements`, {
    method: "POST",
    body: input,
    schema: Announcement,
  });
}

export function useSendAnnouncement(labId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: NewAnnouncement) => sendAnnouncement(labId, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: announcementKeys.ofLab(labId) }),
  });
}
