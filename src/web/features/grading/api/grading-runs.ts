import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { GradingRun, GradingRunList, type StartGradingRunRequest } from "../../../../common/grading-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { gradingKeys } from "./grading-keys.ts";

// A run in progress is polled once a second, so its table fills in as sessions are graded; a
// finished run never changes again.
export const runningPollMs = 1000;
const idlePollMs = 15_000;

export function getGradingRuns(labId: string, signal?: AbortSignal): Promise<GradingRunList> {
  return apiRequest(`/labs/${encodeURIComponent(labId)}/grading-runs`, { schema: GradingRunList, signal });
}

export function getGradingRun(runId: string, signal?: AbortSignal): Promise<GradingRun> {
  return apiRequest(`/grading-runs/${encodeURIComponent(runId)}`, { schema: GradingRun, signal });
}

export function startGradingRun(labId: string, request: StartGradingRunRequest): Promise<GradingRun> {
  return apiRequest(`/labs/${encodeURIComponent(labId)}/grading-runs`, {
    method: "POST",
    body: request,
    schema: GradingRun,
  });
}

export function rerunGradingRun(runId: string): Promise<GradingRun> {
  return apiRequest(`/grading-runs/${encodeURIComponent(runId)}/rerun`, {
    method: "POST",
    schema: GradingRun,
  });
}

export const gradingRunsQueryOptions = (labId: string) =>
  queryOptions({
    queryKey: gradingKeys.runList(labId),
    queryFn: ({ signal }) => getGradingRuns(labId, signal),
    refetchInterval: (query) =>
      query.state.data?.items.some((run) => run.status === "running") ? runningPollMs : idlePollMs,
  });

export const gradingRunQueryOptions = (runId: string) =>
  queryOptions({
    queryKey: gradingKeys.run(runId),
    queryFn: ({ signal }) => getGradingRun(runId, signal),
    refetchInterval: (query) => (query.state.data?.status === "running" ? runningPollMs : false),
  });

export function useGradingRuns(labId: string) {
  return useQuery(gradingRunsQueryOptions(labId));
}

export function useGradingRun(runId: string | undefined) {
  return useQuery({ ...gradingRunQueryOptions(runId ?? ""), enabled: runId !== undefined });
}

/** Starts a run (all running sessions, or the chosen ones) or re-runs a finished one's shortfalls. */
export function useStartGradingRun(labId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (
      request: { kind: "start"; sessionIds?: string[] } | { kind: "rerun"; runId: string },
    ): Promise<GradingRun> =>
      request.kind === "rerun"
        ? rerunGradingRun(request.runId)
        : startGradingRun(labId, request.sessionIds ? { sessionIds: request.sessionIds } : {}),
    onSuccess: (run) => {
      queryClient.setQueryData(gradingKeys.run(run.id), run);
      return queryClient.invalidateQueries({ queryKey: gradingKeys.runList(labId) });
    },
  });
}
