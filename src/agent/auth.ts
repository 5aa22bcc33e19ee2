// Every request must carry the session's bearer token; without it the agent does nothing.
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { HttpError } from "./http-io.ts";

/** The BFF's tokens are 64 hex digits; anything this short is a broken file, never a token. */
const minimumTokenLength = 16;

/**
 * Read on every request: cloud-init may write the file after the agent has started, and a guest
 * image baked with the agent must not need a restart to pick it up.
 */
export async function readToken(tokenFile: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(tokenFile, "utf8");
  } catch (error) {
    throw new HttpError(503, "no_token", `The agent has no token yet (${(error as Error).message}).`);
  }
  const token = text.trim();
  if (token.length < minimumTokenLength) {
    throw new HttpError(503, "no_token", `The token file ${tokenFile} holds no usable token.`);
  }
  return token;
}

export function isAuthorized(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  if (!match?.[1]) return false;
  // Digests have equal length, so the comparison time says nothing about the token's length either.
  return timingSafeEqual(digest(match[1]), digest(token));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
