// Who someone is. Every sign-in method (demo users now, OIDC later) sits behind this one interface,
// so routes and the session store never know which method is in use.
import type { Me } from "../../common/api.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import type { UserRecord } from "./users-file.ts";

export interface Authenticator {
  readonly mode: "demo";
  /** The person, or null when the name or password is wrong (never says which). */
  login(username: string, password: string): Promise<Me | null>;
}

export async function createDemoAuthenticator(users: UserRecord[]): Promise<Authenticator> {
  const byName = new Map(users.map((user) => [user.username, user]));
  // Unknown names are checked against a real hash too, so timing does not reveal which names exist.
  const decoy = await hashPassword("not-a-password");
  return {
    mode: "demo",
    async login(username, password) {
      const user = byName.get(username);
      const matches = await verifyPassword(password, user?.passwordHash ?? decoy);
      return user && matches ? { username: user.username, role: user.role } : null;
    },
  };
}
