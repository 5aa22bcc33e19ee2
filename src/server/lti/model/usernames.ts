// The Lab Console name a person from an LMS signs in as (docs/lti.md): the email the platform gives,
// in lower case, so the same person reached through two courses or two LMSs is one person, as an
// OIDC provider's email is; without one, their id at the platform qualified by the platform's id, so
// two platforms' ids never meet. Launches and rosters both name people with it, so a roster row and
// the person who launched are the same name. Every such name holds an "@": one without (an "email"
// like "ivan") would be a demo user's or an OpenID Connect username, and is not taken.
import type { Platform } from "./model.ts";

export function ltiUsername(
  platform: Platform,
  person: { userId: string; email?: string | undefined },
): string {
  const email = person.email?.trim().toLowerCase();
  return email && /^[^@\s]+@[^@\s]+$/.test(email) && email.length <= 200
    ? email
    : `${person.userId}@${platform.id}`;
}
