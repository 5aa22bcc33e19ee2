// Every number the console hub lives by, in one place: docs/console.md explains each. Tests and the
// bench shorten the timers.
import { consoleMaxFrameBytes } from "../../common/console-protocol.ts";
import type { ScreenOptions } from "./screen.ts";

export interface ConsoleLimits {
  /** Pings to the VM's console and to every browser; a peer that missed the last one is dropped. */
  pingIntervalMs: number;
  /** How long the VM's console stays open after the last viewer left (a reload comes back to it). */
  lingerMs: number;
  /** How often every open console re-checks that its session still exists. */
  sessionCheckMs: number;
  /** How long to keep asking while the VMI is not Running yet (virtctl: 5 minutes, every second). */
  notRunningTimeoutMs: number;
  notRunningRetryMs: number;
  /** Reconnect backoff after the VM's console dropped while the VMI is Running. */
  reconnectInitialMs: number;
  reconnectMaxMs: number;

  /** The BFF's copy of each screen: scrollback kept for replay (browsers keep more). */
  scrollbackLines: number;
  /** How long a console's output is quiet before its scrollback is kept serialized (a twentieth of the memory). */
  scrollbackArchiveAfterMs: number;
  /**
   * The share of its time a console in full flow may spend archiving as it goes, which keeps a burst
   * from growing its terminal to the whole scrollback.
   */
  scrollbackArchiveBusyShare: number;
  /**
   * The rows that left each screen (scrolled up, or erased by `clear`) kept as text for the class
   * wall's search: as deep as the scrollback (docs/benchmarks.md, "The wall's search").
   */
  searchableLines: number;
  /**
   * The screen copy parses output lazily (screen.ts): once it has been quiet this long, once its
   * oldest byte waited the longest, or once a batch's worth waits; and whenever someone reads it.
   */
  screenParseQuietMs: number;
  screenParseAtLatestMs: number;
  screenParseBatchBytes: number;
  /**
   * A fresh console's screen starts from the tail of the VM's serial console log (its last
   * scrollback's worth of lines): at most this many bytes of it.
   */
  seedLogMaxBytes: number;
  /**
   * How long the log is given to catch up once the line to the VM is open, before it is read: on a
   * node the guest's output reaches the log milliseconds after the guest printed it.
   */
  seedLogSettleMs: number;
  /** A log read that takes longer is given up: the console starts blank, as without a log. */
  seedLogTimeoutMs: number;
  /** Guest size until someone fits it: what the guest's getty sets at boot. */
  initialCols: number;
  initialRows: number;

  /**
   * Unacknowledged output above which the owner's viewers are held (output skipped, the screen
   * replayed once they are below the low watermark), and parse backlog of the screen copy above
   * which the VM's console is not read (until below the low one).
   */
  highWatermarkBytes: number;
  lowWatermarkBytes: number;
  /** An observer further behind than this is dropped (it reconnects and gets the screen again). */
  observerMaxBehindBytes: number;

  /** Keystrokes: a burst of this many bytes, then this many per second. */
  inputBurstBytes: number;
  inputBytesPerSecond: number;
  /** Keys typed while the line to the VM is not up, held until it is; more are refused, visibly. */
  heldInputBytes: number;
  /** Largest frame a browser may send; larger ones close the socket (1009). */
  maxFrameBytes: number;
  /**
   * Output to a browser goes out as soon as this turn of the event loop is over, unless it flows:
   * after a frame of at least `flowingFrameBytes`, the next waits until this long after it (or a
   * frame's worth). A `yes` flood arrives in pieces of a few KiB: one frame each cost the BFF a
   * write, a TCP segment and an ack to read, most of its CPU; a keystroke's echo never waits.
   */
  flowingFrameIntervalMs: number;
  flowingFrameBytes: number;
  /**
   * Control messages (fit, keyboard, anything that is not an ack): a burst, then this many per
   * second; past the allowance they are dropped, and a socket this far past it is closed (1008).
   */
  controlBurst: number;
  controlPerSecond: number;
  controlFloodCloseAfter: number;
  /** The guest's size changes at most once per this interval; the latest size asked for wins. */
  fitIntervalMs: number;
  /** How long a fit waits for the VM's agent before the viewer is told it cannot be reached. */
  fitTimeoutMs: number;
  /** Console attaches per person and session (each writes two audit rows): a burst, then one per interval. */
  attachBurst: number;
  attachRefillMs: number;
  /** Console sockets one person may hold open on one session at once (tabs, read-only windows). */
  socketsPerPerson: number;

  /** A paste into a VM's screen types a character this often (screen/paste-keys.ts says why). */
  screenPasteKeyMs: number;
  /** A screen nobody watches (a class wall keeps it open) asks the VM for changes this often. */
  screenQuietRefreshMs: number;
}

export const defaultConsoleLimits: ConsoleLimits = {
  pingIntervalMs: 25_000,
  lingerMs: 60_000,
  sessionCheckMs: 2_000,
  notRunningTimeoutMs: 5 * 60_000,
  notRunningRetryMs: 1_000,
  reconnectInitialMs: 250,
  reconnectMaxMs: 5_000,
  scrollbackLines: 1_000,
  scrollbackArchiveAfterMs: 250,
  scrollbackArchiveBusyShare: 0.1,
  searchableLines: 1_000,
  screenParseQuietMs: 250,
  screenParseAtLatestMs: 1_000,
  // Below the high watermark, where the VM's line pauses.
  screenParseBatchBytes: 3 * 1024 * 1024,
  seedLogMaxBytes: 512 * 1024,
  seedLogSettleMs: 250,
  seedLogTimeoutMs: 5_000,
  initialCols: 80,
  initialRows: 24,
  highWatermarkBytes: 4 * 1024 * 1024,
  lowWatermarkBytes: 1024 * 1024,
  observerMaxBehindBytes: 4 * 1024 * 1024,
  inputBurstBytes: 64 * 1024,
  heldInputBytes: 4 * 1024,
  inputBytesPerSecond: 32 * 1024,
  maxFrameBytes: consoleMaxFrameBytes,
  flowingFrameIntervalMs: 4,
  flowingFrameBytes: 1024,
  controlBurst: 20,
  controlPerSecond: 5,
  controlFloodCloseAfter: 40,
  fitIntervalMs: 250,
  fitTimeoutMs: 8_000,
  attachBurst: 10,
  attachRefillMs: 3_000,
  socketsPerPerson: 8,
  screenPasteKeyMs: 20,
  screenQuietRefreshMs: 1_000,
};

/** A console's screen copy (screen.ts) as these limits set it up. */
export function screenOptions(limits: ConsoleLimits): ScreenOptions {
  return {
    cols: limits.initialCols,
    rows: limits.initialRows,
    scrollback: limits.scrollbackLines,
    searchableRows: limits.searchableLines,
    archiveAfterMs: limits.scrollbackArchiveAfterMs,
    archiveBusyShare: limits.scrollbackArchiveBusyShare,
    parseQuietMs: limits.screenParseQuietMs,
    parseAtLatestMs: limits.screenParseAtLatestMs,
    parseBatchBytes: limits.screenParseBatchBytes,
  };
}
