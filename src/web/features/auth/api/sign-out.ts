import { useMutation, useQueryClient } from "@tanstack/react-query";
import * as z from "zod/mini";
import { LogoutResult } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { authKeys } from "./auth-keys.ts";

/** Undefined (204), or where to end the provider's session too (OpenID Connect). */
export function signOut(): Promise<LogoutResult | undefined> {
  return apiRequest("/auth/logout", { method: "POST", schema: z.optional(LogoutResult) });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signOut,
    onSuccess: () => {
      queryClient.clear();
      queryClient.setQueryData(authKeys.me(), null);
    },
  });
}
