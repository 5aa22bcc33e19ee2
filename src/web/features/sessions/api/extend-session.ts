import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

export function extendSession(sessionId: string): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/extend`, { method: "POST", schema: Session });
}

export function useExtendSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: extendSession,
    onSuccess: (session) => {
      queryClient.setQueryData(sessionKeys.detail(session.id), session);
      return queryClient.invalidateQueries({ queryKey: sessionKeys.lists() });
    },
  });
}
