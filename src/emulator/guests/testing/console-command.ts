// Test helper: runs one command at a guest's console prompt (as the guest user) and gives back what it
// printed and its exit status. The end marker is typed as "do""ne" so that the echo of the typed line
// never matches what is waited for.
import type { Guest } from "../sandbox/guest.ts";
import { SerialTranscript } from "./serial-transcript.ts";

let next = 0;

export interface ConsoleResult {
  /** What the command printed, lines joined with "\n". */
  output: string;
  status: number;
}

export async function runInConsole(
  guest: Guest,
  command: string,
  timeoutMs = 10_000,
): Promise<ConsoleResult> {
  const id = ++next;
  const transcript = new SerialTranscript(guest);
  try {
    transcript.type(`${command}; printf '<<%s:%s>>\\n' "$?" "do""ne-${id}"\r`);
    const text = await transcript.waitFor(new RegExp(`<<(\\d+):done-${id}>>\\r\\n`), timeoutMs);
    const end = text.lastIndexOf("<<");
    const status = Number(/<<(\d+):done-/.exec(text.slice(end))?.[1] ?? "-1");
    // The output follows the echo of the typed line and bash's bracketed-paste switch (ESC[?2004l).
    const switchOff = "\x1b[?2004l\r";
    const start = text.lastIndexOf(switchOff, end);
    const output = text.slice(start >= 0 ? start + switchOff.length : 0, end).replace(/\r\n/g, "\n");
    return { output, status };
  } finally {
    transcript.detach();
  }
}
