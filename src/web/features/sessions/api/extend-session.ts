import { useMutation } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { useSessionChanged } from "./session-changed.ts";

export function extendSession(sessionId: string): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}/extend`, { method: "POST", schema: Session });
}

export function useExtendSession() {
  const sessionChanged = useSessionChanged();
  return useMutation({ mutationFn: extendSession, onSuccess: sessionChanged });
}
