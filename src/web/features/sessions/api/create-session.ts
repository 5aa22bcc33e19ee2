import { useMutation } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { useSessionChanged } from "./session-changed.ts";

export function createSession(labId: string): Promise<Session> {
  return apiRequest("/sessions", { method: "POST", body: { labId }, schema: Session });
}

export function useCreateSession() {
  const sessionChanged = useSessionChanged();
  return useMutation({ mutationFn: createSession, onSuccess: sessionChanged });
}
