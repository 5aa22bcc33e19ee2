// The screen websocket between the SPA and the BFF (GET /api/sessions/:id/vnc): a VM's graphical
// console, shared like the serial console. Binary frames carry RFB 3.8 both ways (RFC 6143), the BFF
// being the server, so noVNC is the client; text frames carry the small JSON messages below, which
// the SPA takes out before noVNC sees the stream. Keys and pointer from anyone but the keyboard's
// holder are dropped by the BFF; `?mode=observe` is read-only, as on the console.
import * as z from "zod/mini";
import { ConsoleNotice, ConsoleServerMessage, UpstreamState } from "./console-protocol.ts";

export { ConsoleQuery as ScreenQuery } from "./console-protocol.ts";

/** The longest paste the BFF types into a VM at once, in characters. */
export const maxPasteCharacters = 2000;

type ConsoleMessage<T extends string> = Extract<ConsoleServerMessage, { type: T }>;

export const ScreenServerMessage = z.discriminatedUnion("type", [
  /** Where the BFF's own connection to the VM's screen stands; the message says it in plain words. */
  z.object({
    type: z.literal("status"),
    state: UpstreamState,
    message: z.nullable(z.string()),
    notice: z.optional(z.nullable(ConsoleNotice)),
  }),
  /** As on the console: who types into the VM, and what this viewer may do about it. */
  z.object({
    type: z.literal("keyboard"),
    holder: z.string(),
    holderIsOwner: z.boolean(),
    canType: z.boolean(),
    canTake: z.boolean(),
    canRelease: z.boolean(),
  }),
  /** As on the console: everyone with the screen open, one entry per person. */
  z.object({
    type: z.literal("viewers"),
    viewers: z.array(z.object({ username: z.string(), role: z.string(), mode: z.enum(["observe", "type"]) })),
    holder: z.string(),
  }),
  /** A paste was typed into the VM (`characters` of it), or refused and why; nothing of a refused one was typed. */
  z.object({
    type: z.literal("paste"),
    outcome: z.enum(["typed", "refused"]),
    characters: z.number(),
    reason: z.optional(z.enum(["not_holder", "too_long", "busy", "not_connected", "unsupported"])),
  }),
  /** The screen is over; the socket closes next and reconnecting will not help. */
  z.object({ type: z.literal("ended"), reason: z.string(), notice: z.optional(ConsoleNotice) }),
]);
export type ScreenServerMessage = z.output<typeof ScreenServerMessage>;

// The shared messages are the console's, word for word: one keyboard bar and presence list serve both.
export type ScreenKeyboardMessage = ConsoleMessage<"keyboard">;
export type ScreenViewersMessage = ConsoleMessage<"viewers">;

export const ScreenClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("take-keyboard") }),
  z.object({ type: z.literal("release-keyboard") }),
  /** Typed into the VM as keystrokes (a VM's screen has no clipboard), bounded in length and rate. */
  z.object({ type: z.literal("paste"), text: z.string().check(z.maxLength(maxPasteCharacters)) }),
]);
export type ScreenClientMessage = z.output<typeof ScreenClientMessage>;
