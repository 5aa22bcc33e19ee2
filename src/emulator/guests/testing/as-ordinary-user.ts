// Runs a TypeScript script as an ordinary user (uid 1000, in a temporary home of its own), as an
// operator's laptop runs the emulator; needs root to become that user. Resolves with the last line
// the script printed, parsed as JSON, or rejects with what it wrote to stderr.
import { spawn } from "node:child_process";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ordinaryUid = 1000;

export async function runAsOrdinaryUser(script: string): Promise<unknown> {
  const home = await mkdtemp(join(tmpdir(), "lab-ordinary-user-"));
  await chown(home, ordinaryUid, ordinaryUid);
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        "setpriv",
        [
          `--reuid=${ordinaryUid}`,
          `--regid=${ordinaryUid}`,
          "--clear-groups",
          "--",
          process.execPath,
          "--import",
          "tsx",
          script,
        ],
        {
          cwd: process.cwd(),
          env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: home },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
      child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
      child.once("error", reject);
      child.once("close", (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`exited ${code}: ${stderr}`)),
      );
    });
    return JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
