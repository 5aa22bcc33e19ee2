// The key of a session's lab agent, derived from the BFF's secret; the agent gets it in its user data.
import { createHmac } from "node:crypto";

/**
 * HMAC-SHA256 of the session id under the server secret (AGENT_TOKEN_SECRET), as hex. Every BFF
 * replica can compute it, so nothing has to be stored; the BFF hands it to the guest in the
 * session's cloud-init Secret, and from then on only signs with it (signature.ts): the key
 * itself never crosses the wire again. The prefix keeps these MACs apart from anything else the same
 * secret might sign; it is v1's, when this was a bearer token: the derivation did not change.
 */
export function agentKey(secret: string, sessionId: string): string {
  if (secret.length === 0) throw new Error("The agent key secret is empty.");
  return createHmac("sha256", secret).update(`lab-agent-token:v1:${sessionId}`).digest("hex");
}

/**
 * A warm VM's key (classes/warm-pool.ts): a different derivation from any session's, so the key the VM
 * booted with opens nothing once a launch has claimed it and handed it the session's key.
 */
export function warmAgentKey(secret: string, vmName: string): string {
  if (secret.length === 0) throw new Error("The agent key secret is empty.");
  return createHmac("sha256", secret).update(`lab-agent-warm-key:v1:${vmName}`).digest("hex");
}

/**
 * The session's key sealed for the claim request: XOR with a pad only the warm key's holder can make
 * for this nonce (the agent's claim_pad). A nonce is never used twice, so neither is a pad.
 */
export function sealKey(warmKey: string, nonce: string, sessionKey: string): string {
  const raw = Buffer.from(sessionKey, "hex");
  if (raw.length !== 32) throw new Error("A session key is 64 hexadecimal digits.");
  const pad = createHmac("sha256", warmKey).update(`lab-agent-claim:v1\n${nonce}`).digest();
  return Buffer.from(raw.map((byte, index) => byte ^ (pad[index] ?? 0))).toString("hex");
}
