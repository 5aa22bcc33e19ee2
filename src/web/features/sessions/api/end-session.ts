import { useMutation } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { useSessionChanged } from "./session-changed.ts";

export function endSession(sessionId: string): Promise<Session> {
  return apiRequest(`/sessions/${encodeURIComponent(sessionId)}`, { method: "DELETE", schema: Session });
}

export function useEndSession() {
  const sessionChanged = useSessionChanged();
  return useMutation({ mutationFn: endSession, onSuccess: sessionChanged });
}
