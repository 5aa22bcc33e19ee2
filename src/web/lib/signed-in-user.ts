// The signed-in person, for every page and feature behind the auth guard: shared here so that a feature
// can read who is looking without importing the auth feature.
import { createContext, use } from "react";
import type { Me } from "../../common/api.ts";

/**
 * Provided by RequireAuth. A context rather than a read of the `me` query: when a 401 clears that
 * query, pages below the guard may re-render once more before the guard redirects, and they must still
 * have a person to render with.
 */
export const SignedInUserContext = createContext<Me | null>(null);

export function useSignedInUser(): Me {
  const me = use(SignedInUserContext);
  if (!me) throw new Error("useSignedInUser is only for pages behind RequireAuth");
  return me;
}
