// The class wall's websocket (GET /api/labs/:labId/wall, staff only): the BFF streams one lab's
// sessions and live miniatures of their consoles as JSON text frames. It sends only what changed, at
// most once per interval; the browser sends nothing and closes the socket while its tab is hidden.
import * as z from "zod/mini";
import { HelpRequest, SessionStatus } from "./api.ts";

export const WallSession = z.object({
  sessionId: z.string(),
  owner: z.string(),
  status: SessionStatus,
  expiresAt: z.string(),
  help: z.nullable(HelpRequest),
  /** The latest self-check's score, or null when there is none or it could not grade. */
  score: z.nullable(z.number()),
});
export type WallSession = z.output<typeof WallSession>;

/** The visible screen of one console: its rows as plain text and where the cursor is. */
export const WallScreen = z.object({
  sessionId: z.string(),
  rows: z.array(z.string()),
  cursor: z.object({ x: z.number(), y: z.number() }),
});
export type WallScreen = z.output<typeof WallScreen>;

export const WallServerMessage = z.discriminatedUnion("type", [
  /** Every session on the wall, whenever any of them changed (the whole list: it is small). */
  z.object({ type: z.literal("sessions"), items: z.array(WallSession) }),
  /** The screens that changed since the last frame. */
  z.object({ type: z.literal("screens"), screens: z.array(WallScreen) }),
]);
export type WallServerMessage = z.output<typeof WallServerMessage>;
