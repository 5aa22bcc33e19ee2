// The bearer token of a session's grading agent. Server-side only (node:crypto): the SPA must not import it.
import { createHmac } from "node:crypto";

/**
 * HMAC-SHA256 of the session id under the server secret, as hex. Every BFF replica can compute it,
 * so nothing has to be stored; the BFF hands it to the guest in the session's cloud-init Secret.
 * The prefix keeps these MACs apart from anything else the same secret might sign.
 */
export function agentToken(secret: string, sessionId: string): string {
  if (secret.length === 0) throw new Error("The agent token secret is empty.");
  return createHmac("sha256", secret).update(`lab-agent-token:v1:${sessionId}`).digest("hex");
}
