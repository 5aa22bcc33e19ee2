// Reading an agent's answer that came through node:http (files and terminals): its MAC header, and
// a small body (an error's JSON) read whole, bounded, since anything longer is not the agent's.
import type { IncomingMessage } from "node:http";
import { AgentUnreachableError } from "./errors.ts";
import { agentMacHeader } from "./signature.ts";

/** Error answers are small JSON. */
const maxSmallAnswerBytes = 64 * 1024;

export function agentMacOf(answer: IncomingMessage): string | undefined {
  const mac = answer.headers[agentMacHeader];
  return typeof mac === "string" ? mac : undefined;
}

/** The whole body; rejects with AgentUnreachableError past the bound. */
export async function readSmallAnswer(answer: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer) {
    size += (chunk as Buffer).length;
    if (size > maxSmallAnswerBytes) {
      answer.destroy();
      throw new AgentUnreachableError("The VM's agent sent an answer the console cannot read.");
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body as JSON, or undefined when it is not. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}
