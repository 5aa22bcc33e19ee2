import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { isApiError } from "../lib/api-error.ts";
import { authKeys } from "../features/auth/api/auth-keys.ts";

export function createQueryClient(): QueryClient {
  // A 401 anywhere means the session cookie is gone: forget the person, and the auth guard sends the
  // page back to sign-in with a return path.
  const onError = (error: unknown) => {
    if (isApiError(error, 401)) queryClient.setQueryData(authKeys.me(), null);
  };

  const queryClient: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        // Off on purpose: when a whole class comes back to the tab after a demo, refetch-on-focus would
        // fire every browser at the same second. Polling covers freshness instead: intervals pause in a
        // hidden tab and resume on their own timers, which differ per browser, so the load stays spread.
        refetchOnWindowFocus: false,
        refetchIntervalInBackground: false,
        staleTime: 1000,
        // Client errors will not fix themselves; server and network errors get two more tries.
        retry: (failureCount, error) => {
          if (isApiError(error) && error.status >= 400 && error.status < 500) return false;
          return failureCount < 2;
        },
      },
      mutations: { retry: false },
    },
  });
  return queryClient;
}
