// `npm run emulator` as its own process, as a parent (the BFF, a benchmark) spawns it: stdin a pipe,
// so `--exit-with-stdin` can be tested by closing it, and the URL taken from what it prints.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export interface EmulatorProcess {
  child: ChildProcessByStdio<Writable, Readable, null>;
  /** The server URL from its "listening on" line. */
  url: string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts src/emulator/main.ts with these flags; rejects if it exits before it listens. */
export async function spawnEmulator(flags: string[]): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/emulator/main.ts", ...flags], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (https:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      void exited.then((code) => reject(new Error(`the emulator exited with ${code}: ${output}`)));
    });
    return { child, url, exited };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
