import { useMutation } from "@tanstack/react-query";
import { Session } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";

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

/**
 * Raises, lowers or answers a hand. The answer is the changed session: `onChanged` gets it, so that
 * the pages showing sessions show the hand at once (the mutation waits for what it returns).
 */
export function useChangeHelp(onChanged: (session: Session) => Promise<void>) {
  return useMutation({ mutationFn: changeHelp, onSuccess: onChanged });
}
