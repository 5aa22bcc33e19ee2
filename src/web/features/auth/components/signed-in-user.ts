import { createContext, use } from "react";
import type { Me } from "../../../../common/api.ts";

/**
 * The signed-in person, provided by RequireAuth. A context rather than a read of the `me` query: when
 * a 401 clears that query, pages below the guard may re-render once more before the guard redirects,
 * and they must still have a person to render with.
 */
export const SignedInUserContext = createContext<Me | null>(null);

export function useSignedInUser(): Me {
  const me = use(SignedInUserContext);
  if (!me) throw new Error("useSignedInUser is only for pages behind RequireAuth");
  return me;
}
