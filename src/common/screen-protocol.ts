// The screen websocket between the SPA and the BFF (GET /api/sessions/:id/vnc): a VM's graphical
// console, shared like the serial console. Binary frames carry RFB 3.8 both ways (RFC 6143), the BFF
// being the server, so noVNC is the client; text frames carry the small JSON messages below, which
// the SPA takes out before noVNC sees the stream. Keys and pointer from anyone but the keyboard's
// holder are dropped by the BFF; `?mode=observe` is read-only, as on the console.
import * as z from "zod/mini";
import { EndedMessage, KeyboardMessage, StatusMessage, ViewersMessage } from "./console-protocol.ts";

export { ConsoleQuery as ScreenQuery } from "./console-protocol.ts";

/** The longest paste the BFF types into a VM at once, in characters. */
export const maxPasteCharacters = 2000;

export const ScreenServerMessage = z.discriminatedUnion("type", [
  /** Where the BFF's own connection to the VM's screen stands, as for the console. */
  StatusMessage,
  /** The console's, word for word: one keyboard bar and presence list serve both. */
  KeyboardMessage,
  ViewersMessage,
  /** A paste was typed into the VM (`characters` of it), or refused and why; nothing of a refused one was typed. */
  z.object({
    type: z.literal("paste"),
    outcome: z.enum(["typed", "refused"]),
    characters: z.number(),
    reason: z.optional(z.enum(["not_holder", "busy", "not_connected", "unsupported"])),
  }),
  EndedMessage,
]);
export type ScreenServerMessage = z.output<typeof ScreenServerMessage>;

export const ScreenClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("take-keyboard") }),
  z.object({ type: z.literal("release-keyboard") }),
  /** Typed into the VM as keystrokes (a VM's screen has no clipboard), bounded in length and rate. */
  z.object({ type: z.literal("paste"), text: z.string().check(z.maxLength(maxPasteCharacters)) }),
]);
export type ScreenClientMessage = z.output<typeof ScreenClientMessage>;
