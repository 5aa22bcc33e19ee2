// Sets the serial terminal's size, so full-screen programs in the guest match the browser's terminal.
import { execFile } from "node:child_process";
import type { AgentTtySize } from "../common/agent-protocol.ts";
import { HttpError } from "./http-io.ts";

const sttyTimeoutMs = 5000;

/** The kernel then sends SIGWINCH to the terminal's foreground programs, which redraw. */
export function setTtySize(tty: string, size: AgentTtySize): Promise<void> {
  const args = ["-F", tty, "rows", String(size.rows), "cols", String(size.cols)];
  return new Promise((resolve, reject) => {
    execFile("stty", args, { timeout: sttyTimeoutMs }, (error, _stdout, stderr) => {
      if (!error) resolve();
      else {
        const detail = stderr.trim() || error.message;
        reject(new HttpError(500, "tty_failed", `Cannot set the size of ${tty}: ${detail}`));
      }
    });
  });
}
