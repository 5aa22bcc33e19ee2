// An instructor signs one person out everywhere: every sign-in of theirs made until now stops
// counting on every replica within a poll, and their open consoles and walls close. For a demoted
// TA, a removed student or a stolen cookie, without waiting the 12 hours a cookie lasts. The same
// as `npm run sign-out-user` (admin/sign-out-user.ts) for when no shell is at hand.
import type { FastifyInstance } from "fastify";
import { SignOutUserRequest, type SignOutUserResult } from "../../common/operations-api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import { requireUser } from "./current-user.ts";
import type { LoginSessions } from "./login-sessions.ts";

export function registerAdminSignOutRoute(
  app: FastifyInstance,
  { loginSessions, audit }: { loginSessions: LoginSessions; audit?: AuditLog },
): void {
  app.post("/api/admin/sign-outs", async (request): Promise<SignOutUserResult> => {
    const me = requireUser(request, loginSessions);
    if (me.role !== "instructor") {
      throw new HttpError(403, "forbidden", "Only instructors can sign people out.");
    }
    const { username } = parseOrThrow(SignOutUserRequest, request.body);
    const cutOff = await loginSessions.cutOff(username);
    const result: SignOutUserResult = {
      username,
      signedInUpTo: new Date(cutOff.issuedUpTo).toISOString(),
      keptUntil: new Date(cutOff.expiresAt).toISOString(),
    };
    // The entry's time is the cut-off's, to the millisecond or two.
    await audit?.record({ action: "sign-out-user", actor: me, details: { username } }, request);
    return result;
  });
}
