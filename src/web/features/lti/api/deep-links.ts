import { queryOptions, useMutation, useQuery } from "@tanstack/react-query";
import { LtiDeepLinkAnswer, LtiDeepLinkRequest, type LtiDeepLinkChoice } from "../../../../common/lti-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { isApiError } from "../../../lib/api-error.ts";
import { ltiKeys } from "./lti-keys.ts";

export function getLtiDeepLink(requestId: string, signal?: AbortSignal): Promise<LtiDeepLinkRequest> {
  return apiRequest(`/lti/deep-links/${encodeURIComponent(requestId)}`, {
    schema: LtiDeepLinkRequest,
    signal,
  });
}

/** The signed answer for the LMS; the request is used up by it. */
export function answerLtiDeepLink(requestId: string, choice: LtiDeepLinkChoice): Promise<LtiDeepLinkAnswer> {
  return apiRequest(`/lti/deep-links/${encodeURIComponent(requestId)}`, {
    method: "POST",
    body: choice,
    schema: LtiDeepLinkAnswer,
  });
}

export function useLtiDeepLink(requestId: string) {
  return useQuery(
    queryOptions({
      queryKey: ltiKeys.deepLink(requestId),
      queryFn: ({ signal }) => getLtiDeepLink(requestId, signal),
      // What the LMS asked for never changes; reading it again could only find it used up.
      staleTime: Infinity,
    }),
  );
}

export function useAnswerLtiDeepLink(requestId: string) {
  return useMutation({ mutationFn: (choice: LtiDeepLinkChoice) => answerLtiDeepLink(requestId, choice) });
}

/** 404: no such request, or it timed out and was forgotten; 410: it was answered already. Either way only the LMS can start a new one. */
export function isDeepLinkGone(error: unknown): boolean {
  return isApiError(error, 404) || isApiError(error, 410);
}
