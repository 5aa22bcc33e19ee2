import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { LtiPlatformList } from "../../../../common/lti-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { ltiKeys } from "./lti-keys.ts";

export function getLtiPlatforms(signal?: AbortSignal): Promise<LtiPlatformList> {
  return apiRequest("/lti/platforms", { schema: LtiPlatformList, signal });
}

/** Trusts a platform that registered itself; its body, if any, is not needed: the list is read again. */
export function approveLtiPlatform(platformId: string): Promise<void> {
  return apiRequest(`/lti/platforms/${encodeURIComponent(platformId)}/approve`, { method: "POST" });
}

export function useLtiPlatforms() {
  return useQuery(
    queryOptions({
      queryKey: ltiKeys.platforms(),
      queryFn: ({ signal }) => getLtiPlatforms(signal),
      // An LMS admin may run Dynamic Registration while the instructor has this page open, waiting
      // for the new platform to show up for approval.
      refetchInterval: 30_000,
    }),
  );
}

export function useApproveLtiPlatform() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: approveLtiPlatform,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ltiKeys.platforms() }),
  });
}
