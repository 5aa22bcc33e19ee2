// The Lab Console name a person from an LMS signs in as (docs/lti.md). By default their id at the
// platform qualified by the platform's id, so no platform can name someone another platform, the
// users file or the OpenID provider names. The operator may let a platform speak for its school's
// email domains (emailDomains): then an email there is the name, so the same person reached through
// two courses or two LMSs of the school is one person. Launches and rosters both name people with
// it, so a roster row and the person who launched are the same name.
import type { Platform } from "./model.ts";

export function ltiUsername(
  platform: Pick<Platform, "id" | "emailDomains">,
  person: { userId: string; email?: string | undefined },
): string {
  const email = person.email?.trim().toLowerCase();
  const domain = email === undefined ? undefined : /^[^@\s]+@([^@\s]+)$/.exec(email)?.[1];
  const spokenFor =
    domain !== undefined && platform.emailDomains.some((each) => each.toLowerCase() === domain);
  return spokenFor && email!.length <= 200 ? email! : `${person.userId}@${platform.id}`;
}
