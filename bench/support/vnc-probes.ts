// Viewers of a VM's screen for bench/vnc.ts, whichever way they are connected (straight on the
// guest's VNC socket, or through the BFF with the repo's RFB client or with noVNC's encodings), and
// what they see: a character's glyph in a cell of the text screen, the whole screen in reverse video.
import net from "node:net";
import type WebSocket from "ws";
import { loadVgaFont } from "../../src/emulator/guests/screen/vga-font.ts";
import { screenText } from "../../src/emulator/testing/screen-text.ts";
import { RfbClient, type Framebuffer, type Rect } from "../../src/server/screen/rfb-client.ts";
import { ScreenTestClient } from "../../src/server/screen/testing/screen-client.ts";
import { openBrowserSocket, opened } from "../../src/server/testing/browser-socket.ts";
import { NovncLikeViewer } from "./novnc-like-viewer.ts";

export const keysyms = { x: 0x78, backSpace: 0xff08, enter: 0xff0d } as const;

// The cell of the screen a probe watches

const glyphs = (() => {
  const font = loadVgaFont();
  if ("problem" in font) throw new Error(font.problem);
  return font.glyphs;
})();

export interface Cell {
  row: number;
  column: number;
}

/** Whether the cell shows this character's glyph (" ": blank), its top 14 lines (the cursor blinks in the last two). */
export function cellShows(screen: Framebuffer, cell: Cell, character: string): boolean {
  if (screen.width !== 720 || screen.height !== 400) return false;
  const code = character.charCodeAt(0);
  for (let line = 0; line < 14; line += 1) {
    let bits = 0;
    for (let x = 0; x < 8; x += 1) {
      const at = ((cell.row * 16 + line) * 720 + cell.column * 9 + x) * 4;
      if ((screen.pixels[at] ?? 0) > 0x40) bits |= 0x80 >> x;
    }
    if (bits !== (character === " " ? 0 : glyphs[code * 16 + line])) return false;
  }
  return true;
}

/** Whether the screen is in reverse video (light background): its two far corners are both light. */
export function reversed(screen: Framebuffer): boolean | undefined {
  if (screen.width !== 720 || screen.height !== 400) return undefined;
  const light = (x: number, y: number) => (screen.pixels[(y * 720 + x) * 4] ?? 0) > 0x40;
  if (light(0, 0) && light(719, 399)) return true;
  if (!light(0, 0) && !light(719, 399)) return false;
  return undefined;
}

// Viewers, whichever way they are connected

export interface Probe {
  label: string;
  framebuffer(): Framebuffer;
  bytes(): number;
  key(keysym: number): void;
  /** Calls `listener` after every applied update, with its rectangles. */
  onUpdate(listener: (rects: Rect[]) => void): () => void;
  close(): void;
}

/** Resolves with the milliseconds until `condition` holds after an update (at once if it holds now). */
export function until(
  probe: Probe,
  condition: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<number> {
  const started = performance.now();
  if (condition()) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      const { width, height } = probe.framebuffer();
      reject(
        new Error(
          `${probe.label}: no ${what} within ${timeoutMs / 1000} s (screen ${width}x${height}: ${JSON.stringify(screenText(probe.framebuffer()).filter(Boolean).slice(-3))})`,
        ),
      );
    }, timeoutMs);
    const stop = probe.onUpdate(() => {
      if (!condition()) return;
      clearTimeout(timer);
      stop();
      resolve(performance.now() - started);
    });
  });
}

function press(send: (keysym: number, down: boolean) => void, keysym: number): void {
  send(keysym, true);
  send(keysym, false);
}

/** RfbClient straight on the guest's VNC socket, as virt-handler dials it. */
export async function directProbe(socketPath: string): Promise<Probe> {
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const connection = net.createConnection(socketPath, () => resolve(connection));
    connection.once("error", reject);
  });
  socket.setNoDelay(true);
  const listeners = new Set<(rects: Rect[]) => void>();
  let bytes = 0;
  const rfb: RfbClient = new RfbClient((data) => socket.write(data), {
    updated: (rects) => {
      rfb.requestUpdate(true);
      for (const listener of listeners) listener(rects);
    },
    failed: (reason) => console.error(`direct RFB failed: ${reason}`),
  });
  socket.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    rfb.receive(chunk);
  });
  socket.on("error", () => undefined);
  return {
    label: "direct",
    framebuffer: () => rfb.framebuffer,
    bytes: () => bytes,
    key: (keysym) => press((k, down) => rfb.key(k, down), keysym),
    onUpdate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => socket.destroy(),
  };
}

/** RfbClient through the BFF: the repo's own screen viewer (it asks for Zlib, Raw, CopyRect; the BFF sends Raw). */
export async function bffRfbProbe(bffUrl: string, sessionId: string, cookie: string): Promise<Probe> {
  const client = await ScreenTestClient.connect(bffUrl, sessionId, { cookie });
  const listeners = new Set<(rects: Rect[]) => void>();
  let seen = 0;
  // After the client's own listener: the update, once whole, is applied by then.
  client.socket.on("message", (_data, isBinary) => {
    if (!isBinary || client.updates === seen) return;
    seen = client.updates;
    for (const listener of listeners) listener([]);
  });
  return {
    label: "via BFF (RfbClient)",
    framebuffer: () => client.rfb.framebuffer,
    bytes: () => client.bytesReceived,
    key: (keysym) => press((k, down) => client.rfb.key(k, down), keysym),
    onUpdate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => client.close(),
  };
}

/** A viewer asking for noVNC's encodings through the BFF: what a browser gets. */
export async function novncProbe(
  bffUrl: string,
  sessionId: string,
  cookie: string,
  mode?: "observe",
): Promise<Probe> {
  const query = mode ? `?mode=${mode}` : "";
  const socket: WebSocket = openBrowserSocket(bffUrl, `/api/sessions/${sessionId}/vnc${query}`, { cookie });
  const viewer = new NovncLikeViewer(socket);
  await opened(socket, `the screen of ${sessionId}`);
  return {
    label: "via BFF (noVNC's encodings)",
    framebuffer: () => viewer.framebuffer,
    bytes: () => viewer.bytes,
    key: (keysym) => press((k, down) => viewer.key(k, down), keysym),
    onUpdate: (listener) => viewer.onUpdate(listener),
    close: () => viewer.close(),
  };
}

/** Locates the cursor's cell: types "x" on `probe`, finds it after the shell's prompt on every probe, erases it. */
export async function cursorCell(typist: Probe, watchers: Probe[]): Promise<Cell> {
  typist.key(keysyms.x);
  let cell: Cell | undefined;
  await until(
    typist,
    () => {
      const rows = screenText(typist.framebuffer());
      const row = rows.findLastIndex((text) => /:~\$ x$/.test(text));
      if (row < 0) return false;
      cell = { row, column: rows[row]!.length - 1 };
      return true;
    },
    "typed x after the prompt",
  );
  const found = cell!;
  for (const probe of watchers) await until(probe, () => cellShows(probe.framebuffer(), found, "x"), "x");
  typist.key(keysyms.backSpace);
  for (const probe of watchers)
    await until(probe, () => cellShows(probe.framebuffer(), found, " "), "x erased");
  return found;
}
