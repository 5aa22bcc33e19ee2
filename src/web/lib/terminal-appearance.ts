// How every terminal of the SPA draws text: the console and the recording player, so a recording
// looks like the console it recorded.
import type { ITerminalOptions } from "@xterm/xterm";

export const terminalAppearance = {
  // Wide characters (Japanese, Chinese) come from the system's CJK font by the browser's own
  // fallback, chosen by the page's lang; xterm.js stretches or squeezes each glyph to two cells.
  fontFamily: '"DejaVu Sans Mono", "Cascadia Mono", ui-monospace, monospace',
  // xterm.js's DOM renderer makes a row exactly as tall as the font's ascent and descent and clips
  // what is drawn outside it. DejaVu Sans Mono, first here and Linux's usual monospace, draws "_" at
  // the very bottom of that box, and at 10, 14 (the default), 19 and 23 px in Chromium the rounding
  // puts it outside: x86_64 read "x86 64". A tenth more height gives it room at every size
  // (xterm.js issue 4067).
  lineHeight: 1.1,
  theme: { background: "#101418", foreground: "#e6e9ef" },
} as const satisfies ITerminalOptions;
