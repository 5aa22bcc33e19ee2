// The lab agent's proof, both ways (docs/agent.md, "Authentication"). The BFF never sends the
// session's key: it signs each request with a fresh nonce, and the agent signs its answer over that
// nonce, so an answer that does not verify came from something that does not hold the key.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const agentAuthScheme = "Lab-Agent-HMAC";
/** The response header that carries the agent's MAC (HTTP header names are case-insensitive). */
export const agentMacHeader = "lab-agent-mac";

export interface SignedRequest {
  authorization: string;
  nonce: string;
}

export function newAgentNonce(): string {
  return randomBytes(16).toString("hex");
}

export function signAgentRequest(
  key: string,
  method: string,
  target: string,
  body: Buffer,
  nonce = newAgentNonce(),
): SignedRequest {
  return signed(key, nonce, ["lab-agent-request:v2", method, target, nonce, sha256(body)]);
}

/** True when `mac` is the key holder's signature of this answer to the request that carried `nonce`. */
export function verifyAgentAnswer(
  key: string,
  nonce: string,
  status: number,
  body: Buffer,
  mac: string | undefined,
): boolean {
  return isMac(mac, () => agentAnswerMac(key, nonce, status, body));
}

/** What the agent puts in its lab-agent-mac header; exported for tests that play the agent. */
export function agentAnswerMac(key: string, nonce: string, status: number, body: Buffer): string {
  return hmac(key, ["lab-agent-response:v2", nonce, String(status), sha256(body)]);
}

/**
 * A request whose body streams in signed frames (signed-frames.ts) signs its size instead of a hash
 * of the body, which cannot be known before the body is sent without holding all of it.
 */
export function signStreamRequest(key: string, method: string, target: string, size: number): SignedRequest {
  const nonce = newAgentNonce();
  return signed(key, nonce, ["lab-agent-stream-request:v1", method, target, nonce, String(size)]);
}

/** True when `mac` is the agent's signature of a streamed answer of `size` bytes to `nonce`. */
export function verifyStreamAnswer(
  key: string,
  nonce: string,
  status: number,
  size: number,
  mac: string | undefined,
): boolean {
  return isMac(mac, () => streamAnswerMac(key, nonce, status, size));
}

/** What the agent puts in the header of a streamed answer. */
function streamAnswerMac(key: string, nonce: string, status: number, size: number): string {
  return hmac(key, ["lab-agent-stream-response:v1", nonce, String(status), String(size)]);
}

/** The Authorization header of a request whose signed lines are `lines`. */
function signed(key: string, nonce: string, lines: string[]): SignedRequest {
  return { authorization: `${agentAuthScheme} nonce=${nonce}, mac=${hmac(key, lines)}`, nonce };
}

/** True when `mac`, as a header carries it, is the expected MAC; that is only computed for a well-formed one. */
function isMac(mac: string | undefined, expected: () => string): boolean {
  if (mac === undefined || !/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(Buffer.from(mac, "hex"), Buffer.from(expected(), "hex"));
}

function hmac(key: string, lines: string[]): string {
  return createHmac("sha256", key).update(lines.join("\n")).digest("hex");
}

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}
