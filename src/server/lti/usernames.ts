// The Lab Console name of a person an LMS launches or lists. Their email when the LMS gives one, so
// the same person reaches the same sessions from every course and LMS that links a lab; otherwise
// their LMS id, scoped by the platform so two LMSs' ids never meet. A platform is trusted for the
// people it names, as an OpenID provider is.
import type { Platform } from "./model.ts";

export function ltiUsername(
  platform: Pick<Platform, "id">,
  person: { userId: string; email?: string | undefined },
): string {
  const email = person.email?.trim().toLowerCase();
  return email && email.length <= 200 ? email : `${person.userId}@${platform.id}`;
}
