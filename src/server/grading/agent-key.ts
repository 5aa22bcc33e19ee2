// The key of a session's grading agent, derived from the BFF's secret; the agent gets it in its user data.
import { createHmac } from "node:crypto";

/**
 * HMAC-SHA256 of the session id under the server secret (AGENT_TOKEN_SECRET), as hex. Every BFF
 * replica can compute it, so nothing has to be stored; the BFF hands it to the guest in the
 * session's cloud-init Secret, and from then on only signs with it (agent-signature.ts): the key
 * itself never crosses the wire again. The prefix keeps these MACs apart from anything else the same
 * secret might sign; it is v1's, when this was a bearer token: the derivation did not change.
 */
export function agentKey(secret: string, sessionId: string): string {
  if (secret.length === 0) throw new Error("The agent key secret is empty.");
  return createHmac("sha256", secret).update(`lab-agent-token:v1:${sessionId}`).digest("hex");
}
