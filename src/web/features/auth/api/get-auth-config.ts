import { queryOptions, useQuery } from "@tanstack/react-query";
import { AuthConfig } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { authKeys } from "./auth-keys.ts";

/** Which sign-in the console uses: the demo form, or a button to the organisation's provider. */
export function getAuthConfig(signal?: AbortSignal): Promise<AuthConfig> {
  return apiRequest("/auth/config", { schema: AuthConfig, signal });
}

export const authConfigQueryOptions = () =>
  queryOptions({
    queryKey: authKeys.config(),
    queryFn: ({ signal }) => getAuthConfig(signal),
    // Fixed while the console runs.
    staleTime: Infinity,
  });

export function useAuthConfig() {
  return useQuery(authConfigQueryOptions());
}
