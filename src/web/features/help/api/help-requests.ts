import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { sessionKeys } from "../../sessions/api/session-keys.ts";

const helpPath = (sessionId: string) => `/sessions/${encodeURIComponent(sessionId)}/help`;

type HelpChange =
  | { kind: "raise"; sessionId: string; note: string }
  | { kind: "lower"; sessionId: string }
  | { kind: "acknowledge"; sessionId: string };

function changeHelp(change: HelpChange): Promise<Session> {
  switch (change.kind) {
    case "raise":
      return apiRequest(helpPath(change.sessionId), {
        method: "POST",
        body: { note: change.note },
        schema: Session,
      });
    case "lower":
      return apiRequest(helpPath(change.sessionId), { method: "DELETE", schema: Session });
    case "acknowledge":
      return apiRequest(`${helpPath(change.sessionId)}/acknowledge`, { method: "POST", schema: Session });
  }
}

/** Raises, lowers or answers a hand; the session's detail and the lists show it at once. */
export function useChangeHelp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: changeHelp,
    onSuccess: (session) => {
      queryClient.setQueryData(sessionKeys.detail(session.id), session);
      return queryClient.invalidateQueries({ queryKey: sessionKeys.lists() });
    },
  });
}
