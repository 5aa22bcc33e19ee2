import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

export function restartSession(sessionId: string): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/restart`, {
    method: "POST",
    schema: Session,
  });
}

export function useRestartSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: restartSession,
    onSuccess: (session) => queryClient.invalidateQueries({ queryKey: sessionKeys.detail(session.id) }),
  });
}
