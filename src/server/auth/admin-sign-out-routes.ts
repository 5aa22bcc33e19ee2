// An instructor signs one person out everywhere: every sign-in of theirs made until now stops
// counting on every replica within a poll, and their open consoles and walls close. For a demoted
// TA, a removed student or a stolen cookie, without waiting the 12 hours a cookie lasts. The same
// as `npm run sign-out-user` (cli/sign-out-user.ts) for when no shell is at hand.
import type { FastifyInstance } from "fastify";
import { SignOutUserRequest, type SignOutUserResult } from "../../common/operations-api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { signedInUser } from "../access/policy.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { SignIns } from "./sign-ins.ts";

export function registerAdminSignOutRoute(
  app: FastifyInstance,
  { signIns, audit }: { signIns: SignIns; audit?: AuditLog },
): void {
  const instructor = { config: { access: "instructor" } } as const;
  app.post("/api/admin/sign-outs", instructor, async (request): Promise<SignOutUserResult> => {
    const me = signedInUser(request);
    const { username } = parseOrThrow(SignOutUserRequest, request.body);
    const cutOff = await signIns.cutOff(username);
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
