import { useMutation, useQueryClient } from "@tanstack/react-query";
import { SignOutUserResult } from "../../../../common/operations-api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { auditKeys } from "./audit-keys.ts";

export function signOutUser(username: string): Promise<SignOutUserResult> {
  return apiRequest("/admin/sign-outs", { method: "POST", body: { username }, schema: SignOutUserResult });
}

export function useSignOutUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signOutUser,
    // The log gains a sign-out-user entry.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: auditKeys.all }),
  });
}
