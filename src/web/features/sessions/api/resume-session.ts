import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

/** POST /api/sessions/:id/resume: unpauses a VM the idle limit paused. */
export function resumeSession(sessionId: string): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/resume`, {
    method: "POST",
    schema: Session,
  });
}

export function useResumeSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: resumeSession,
    onSuccess: (session) => queryClient.invalidateQueries({ queryKey: sessionKeys.detail(session.id) }),
  });
}
