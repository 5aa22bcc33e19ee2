// The console websocket between the SPA and the BFF (GET /api/sessions/:id/console). Binary frames
// carry raw terminal bytes both ways; text frames carry the small JSON messages below.
import * as z from "zod/mini";

/** `?mode=observe`: read-only. Staff must ask for it; the owner may, for a second read-only window. */
export const ConsoleQuery = z.object({ mode: z.optional(z.enum(["observe"])) });
export type ConsoleQuery = z.output<typeof ConsoleQuery>;

/** Where the BFF's own connection to the VM's console stands. */
export const UpstreamState = z.enum(["connecting", "connected", "reconnecting"]);
export type UpstreamState = z.output<typeof UpstreamState>;

export const ConsoleServerMessage = z.discriminatedUnion("type", [
  /** `message` says in plain words what the BFF is waiting for, e.g. the VM to start. */
  z.object({ type: z.literal("status"), state: UpstreamState, message: z.nullable(z.string()) }),
  /**
   * The binary frames up to replay-end are the console's current screen and recent scrollback,
   * serialized. `fresh`: the BFF holds no earlier output for this console (first viewer, or the BFF
   * restarted), so a client may keep what it already shows instead of clearing it.
   */
  z.object({ type: z.literal("replay-begin"), fresh: z.boolean() }),
  z.object({ type: z.literal("replay-end") }),
  /** Who types into the VM right now, and what this viewer may do about it. */
  z.object({
    type: z.literal("keyboard"),
    holder: z.string(),
    holderIsOwner: z.boolean(),
    canType: z.boolean(),
    canTake: z.boolean(),
    canRelease: z.boolean(),
  }),
  /** The size the guest was last told (stty), for the "fit" control. */
  z.object({ type: z.literal("guest-size"), cols: z.number(), rows: z.number() }),
  /** The console is over; the socket closes next and reconnecting will not help. */
  z.object({ type: z.literal("ended"), reason: z.string() }),
]);
export type ConsoleServerMessage = z.output<typeof ConsoleServerMessage>;

export const guestSizeLimits = { minCols: 20, maxCols: 500, minRows: 5, maxRows: 200 } as const;

export const ConsoleClientMessage = z.discriminatedUnion("type", [
  /** Flow control: this many more bytes of binary frames were written into the terminal. */
  z.object({
    type: z.literal("ack"),
    bytes: z.number().check(z.int(), z.positive(), z.maximum(1 << 30)),
  }),
  z.object({ type: z.literal("take-keyboard") }),
  z.object({ type: z.literal("release-keyboard") }),
  /** Types `stty rows R cols C` into the guest and sizes the BFF's copy of the screen to match. */
  z.object({
    type: z.literal("fit-guest"),
    cols: z.number().check(z.int(), z.minimum(guestSizeLimits.minCols), z.maximum(guestSizeLimits.maxCols)),
    rows: z.number().check(z.int(), z.minimum(guestSizeLimits.minRows), z.maximum(guestSizeLimits.maxRows)),
  }),
]);
export type ConsoleClientMessage = z.output<typeof ConsoleClientMessage>;

/**
 * A client acks once at least this many bytes were written since its last ack, and whenever it has
 * written all it received (else a paused console could wait forever on a remainder below this).
 */
export const consoleAckBytes = 32 * 1024;

/** The largest frame either side sends; the BFF refuses larger ones from browsers. */
export const consoleMaxFrameBytes = 64 * 1024;

/** Close codes besides the standard ones. A client reconnects after any close not preceded by "ended". */
export const consoleCloseCodes = {
  /** The viewer fell too far behind and was dropped; reconnecting gets it the current screen. */
  tooSlow: 4008,
} as const;
