// A course's id in this console: a hash of the platform's id and the LMS's context id, so it is
// URL-safe whatever the LMS's id looks like, and the same on every replica and after every restart.
import { createHash } from "node:crypto";

export const courseIdPattern = /^[a-f0-9]{24}$/;

export function courseId(platformId: string, contextId: string): string {
  // Platform ids are URL-safe, so the NUL between the two never occurs inside either.
  return createHash("sha256").update(`${platformId}\0${contextId}`).digest("hex").slice(0, 24);
}
