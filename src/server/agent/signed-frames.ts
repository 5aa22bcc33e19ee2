// The lab agent's signed frames, one format for every stream too long to hash before it is sent
// (docs/agent.md, "Files" and "Terminals"): frames of at most 64 KiB, each with a MAC of 32 bytes
// over a label, the request's nonce, the frame's place in its stream and the frame's bytes. The label
// names the stream (an upload, a download, one direction of a terminal), so no frame can be dropped,
// moved, replayed into another request or reflected into another stream. The agent's frame_mac
// (src/agent/lab_agent/keys.py) computes the same bytes; how a stream lays its frames out is its own.
import { createHmac, timingSafeEqual } from "node:crypto";

/** The most bytes one frame carries. */
export const signedFrameBytes = 64 * 1024;
export const frameMacBytes = 32;

/** The streams' labels, as the agent signs them. */
export const frameLabels = {
  upload: "lab-agent-frame:v1",
  download: "lab-agent-answer-frame:v1",
  terminal: (direction: "in" | "out") => `lab-agent-terminal:v1\n${direction}`,
} as const;

/** The MAC of the frame at `index` of a stream, whose bytes are `parts` in order. */
export function frameMac(
  key: string,
  label: string,
  nonce: string,
  index: number,
  ...parts: Uint8Array[]
): Buffer {
  const hmac = createHmac("sha256", key).update(`${label}\n${nonce}\n${index}\n`);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/** One stream's frames in order, on either side: each call is about the next frame. */
export class FrameMacs {
  private index = 0;

  constructor(
    private readonly key: string,
    private readonly label: string,
    private readonly nonce: string,
  ) {}

  /** The place of the next frame in the stream. */
  get next(): number {
    return this.index;
  }

  sign(...parts: Uint8Array[]): Buffer {
    return frameMac(this.key, this.label, this.nonce, this.index++, ...parts);
  }

  /** True when `mac` signs the next frame's bytes; either way the frame after it is next. */
  verify(mac: Uint8Array, ...parts: Uint8Array[]): boolean {
    const expected = this.sign(...parts);
    return mac.length === frameMacBytes && timingSafeEqual(mac, expected);
  }
}
