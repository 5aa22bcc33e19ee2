// What a changed session means for the cached queries, in one place for every mutation that answers
// with the session: this feature's own, and those a page wires in from other features (a raised hand).
import { useQueryClient } from "@tanstack/react-query";
import type { Session } from "../../../../common/api.ts";
import { sessionKeys } from "./session-keys.ts";

/** Puts the answer in the session's detail and fetches every list again (the promise waits for that). */
export function useSessionChanged(): (session: Session) => Promise<void> {
  const queryClient = useQueryClient();
  return (session) => {
    queryClient.setQueryData(sessionKeys.detail(session.id), session);
    return queryClient.invalidateQueries({ queryKey: sessionKeys.lists() });
  };
}
