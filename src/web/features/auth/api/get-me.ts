import { queryOptions, useQuery } from "@tanstack/react-query";
import { SignInState, type Me } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { authKeys } from "./auth-keys.ts";

/**
 * The signed-in person, or null when nobody is signed in. Asked of /api/auth/session, which says
 * "nobody" with a 200: /api/me's 401 would show as an error in the browser's console on every first
 * visit to the sign-in page.
 */
export async function getMe(signal?: AbortSignal): Promise<Me | null> {
  const { user } = await apiRequest("/auth/session", { schema: SignInState, signal });
  return user;
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
