import { queryOptions, useQuery } from "@tanstack/react-query";
import { Me } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { isApiError } from "../../../lib/api-error.ts";
import { authKeys } from "./auth-keys.ts";

/** The signed-in person, or null when nobody is signed in (401 is an answer here, not an error). */
export async function getMe(signal?: AbortSignal): Promise<Me | null> {
  try {
    return await apiRequest("/me", { schema: Me, signal });
  } catch (error) {
    if (isApiError(error, 401)) return null;
    throw error;
  }
}

export const meQueryOptions = () =>
  queryOptions({
    queryKey: authKeys.me(),
    queryFn: ({ signal }) => getMe(signal),
    // Sign-in, sign-out and any 401 write this entry directly; it never goes stale on its own.
    staleTime: Infinity,
  });

export function useMe() {
  return useQuery(meQueryOptions());
}
