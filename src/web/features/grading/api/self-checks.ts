import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { SelfCheck, SelfCheckHistory } from "../../../../common/grading-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { gradingKeys } from "./grading-keys.ts";

const checksPath = (sessionId: string) => `/sessions/${encodeURIComponent(sessionId)}/checks`;

export function getSelfChecks(sessionId: string, signal?: AbortSignal): Promise<SelfCheckHistory> {
  return apiRequest(checksPath(sessionId), { schema: SelfCheckHistory, signal });
}

export function runSelfCheck(sessionId: string): Promise<SelfCheck> {
  return apiRequest(checksPath(sessionId), { method: "POST", schema: SelfCheck });
}

export const selfChecksQueryOptions = (sessionId: string) =>
  queryOptions({
    queryKey: gradingKeys.selfChecks(sessionId),
    queryFn: ({ signal }) => getSelfChecks(sessionId, signal),
    // Only a check adds to the history, and this tab's own checks are put in directly; the slow
    // poll is for a TA watching the student's page (an unchanged history costs a 304).
    refetchInterval: 15_000,
  });

export function useSelfChecks(sessionId: string) {
  return useQuery(selfChecksQueryOptions(sessionId));
}

export function useRunSelfCheck(sessionId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => runSelfCheck(sessionId),
    onSuccess: (check) => {
      queryClient.setQueryData(
        gradingKeys.selfChecks(sessionId),
        (history: SelfCheckHistory | undefined) => ({
          items: [check, ...(history?.items ?? []).filter((item) => item.id !== check.id)],
        }),
      );
    },
  });
}
