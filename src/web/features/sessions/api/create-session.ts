import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "./session-keys.ts";

export function createSession(labId: string): Promise<Session> {
  return apiRequest("/sessions", { method: "POST", body: { labId }, schema: Session });
}

export function useCreateSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createSession,
    onSuccess: (session) => {
      queryClient.setQueryData(sessionKeys.detail(session.id), session);
      return queryClient.invalidateQueries({ queryKey: sessionKeys.lists() });
    },
  });
}
