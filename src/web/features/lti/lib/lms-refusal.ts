import type { LtiScore } from "../../../../common/lti-api.ts";

/**
 * A score's `lastError` split into the LMS's own words and the rest. The BFF writes an LMS's refusal
 * as "<host> refused <what> (HTTP <status>): <the LMS's reason>" (src/server/lti/grades/lms-http.ts),
 * with "no reason given" when the answer had none; its other errors (no line item, no answer in time)
 * are sentences of its own, shown as they are.
 * WARNING: this reads an English sentence the BFF builds. Should its wording change, the whole text
 * shows again, as before; the lasting fix is the BFF sending the LMS's reason and status as fields.
 */
export type LastError =
  { kind: "lms"; status: number; reason: string | null } | { kind: "other"; text: string };

const lmsRefusal = /^\S+ refused .+? \(HTTP (\d{3})\): ([\s\S]*)$/;

export function lastErrorOf(lastError: NonNullable<LtiScore["lastError"]>): LastError {
  const match = lmsRefusal.exec(lastError);
  if (!match) return { kind: "other", text: lastError };
  const reason = match[2]!.trim();
  return {
    kind: "lms",
    status: Number(match[1]),
    reason: reason === "" || reason === "no reason given" ? null : reason,
  };
}
