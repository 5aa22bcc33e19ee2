import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Me, type LoginRequest } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { authKeys } from "./auth-keys.ts";

export function signIn(credentials: LoginRequest): Promise<Me> {
  return apiRequest("/auth/login", { method: "POST", body: credentials, schema: Me });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signIn,
    onSuccess: (me) => {
      // Nothing cached for a previous person on this browser may show through.
      queryClient.clear();
      queryClient.setQueryData(authKeys.me(), me);
    },
  });
}
