// Runs programs as an ordinary user (uid 1000), as an operator's laptop runs the emulator; needs
// root to become that user.
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProgram } from "./run-program.ts";

export const ordinaryUid = 1000;

/** The command that runs `file` with `args` as the ordinary user, without root's groups. */
export function asOrdinaryUser(file: string, args: string[]): [string, string[]] {
  return [
    "setpriv",
    [`--reuid=${ordinaryUid}`, `--regid=${ordinaryUid}`, "--clear-groups", "--", file, ...args],
  ];
}

/**
 * Runs a TypeScript script as the ordinary user, in a temporary home of its own. Resolves with the
 * last line the script printed, parsed as JSON, or rejects with what it wrote to stderr.
 */
export async function runAsOrdinaryUser(script: string): Promise<unknown> {
  const home = await mkdtemp(join(tmpdir(), "lab-ordinary-user-"));
  await chown(home, ordinaryUid, ordinaryUid);
  try {
    const output = await runProgram(...asOrdinaryUser(process.execPath, ["--import", "tsx", script]), {
      PATH: process.env.PATH ?? "",
      HOME: home,
      TMPDIR: home,
    });
    return JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
