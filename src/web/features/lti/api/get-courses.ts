import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { LtiCourseList, LtiRoster } from "../../../../common/lti-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { ltiKeys } from "./lti-keys.ts";

export function getLtiCourses(signal?: AbortSignal): Promise<LtiCourseList> {
  return apiRequest("/lti/courses", { schema: LtiCourseList, signal });
}

export function getLtiRoster(courseId: string, signal?: AbortSignal): Promise<LtiRoster> {
  return apiRequest(`/lti/courses/${encodeURIComponent(courseId)}/roster`, { schema: LtiRoster, signal });
}

/** Asks the LMS for the course's members now (NRPS); its body, if any, is not needed: both lists are read again. */
export function syncLtiRoster(courseId: string): Promise<void> {
  return apiRequest(`/lti/courses/${encodeURIComponent(courseId)}/roster`, { method: "POST" });
}

export function useLtiCourses() {
  return useQuery(
    queryOptions({
      queryKey: ltiKeys.courses(),
      queryFn: ({ signal }) => getLtiCourses(signal),
      // New courses appear when someone launches from them, which is rare next to a page view.
      refetchInterval: 60_000,
    }),
  );
}

export function useLtiRoster(courseId: string) {
  return useQuery(
    queryOptions({
      queryKey: ltiKeys.roster(courseId),
      queryFn: ({ signal }) => getLtiRoster(courseId, signal),
    }),
  );
}

export function useSyncLtiRoster() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: syncLtiRoster,
    // The course's member count and synced time change with its roster.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ltiKeys.courses() }),
  });
}
