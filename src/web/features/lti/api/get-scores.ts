import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { LtiScoreList, type LtiScoreState } from "../../../../common/lti-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { scoreListPollMs } from "../lib/score-polling.ts";
import { ltiKeys } from "./lti-keys.ts";

export interface LtiScoreFilters {
  lab?: string;
  state?: LtiScoreState;
}

export function getLtiScores(filters: LtiScoreFilters, signal?: AbortSignal): Promise<LtiScoreList> {
  const params = new URLSearchParams();
  if (filters.lab) params.set("lab", filters.lab);
  if (filters.state) params.set("state", filters.state);
  const query = params.toString();
  return apiRequest(`/lti/scores${query ? `?${query}` : ""}`, { schema: LtiScoreList, signal });
}

/** Puts a refused or waiting score first in the outbox's line again; the list is read again after. */
export function retryLtiScore(scoreId: string): Promise<void> {
  return apiRequest(`/lti/scores/${encodeURIComponent(scoreId)}/retry`, { method: "POST" });
}

export function useLtiScores(filters: LtiScoreFilters) {
  return useQuery(
    queryOptions({
      queryKey: ltiKeys.scoreList(filters),
      queryFn: ({ signal }) => getLtiScores(filters, signal),
      refetchInterval: (query) => scoreListPollMs(query.state.data),
      // A new filter keeps the old rows on screen until its own arrive, instead of a spinner.
      placeholderData: keepPreviousData,
    }),
  );
}

export function useRetryLtiScore() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: retryLtiScore,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ltiKeys.scores() }),
  });
}
