// Without root the emulator gives a guest one uid, which is both guest root and the student
// (docs/emulator.md). The boot contract must still work there: the agent's unit runs, binds port 899
// (the unshare backend opens ports below 1024 to that uid) and answers port-forward. Run as an ordinary
// user in a process of its own, which needs root here to become one.
import { spawn } from "node:child_process";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runsPrivileged } from "./sandbox.ts";

const ordinaryUid = 1000;
const script = fileURLToPath(new URL("./testing/one-uid-guest.ts", import.meta.url));

describe.runIf(runsPrivileged())("a guest of an emulator run by an ordinary user", () => {
  it("has one uid, and the agent's unit binds port 899 and answers", async () => {
    const home = await mkdtemp(join(tmpdir(), "lab-one-uid-test-"));
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
      expect(JSON.parse(output.trim().split("\n").at(-1) ?? "{}")).toEqual({
        agent: "uid=1000 key=64\n",
        ids: ["1000", "1000"],
        // With one uid the student is guest root too: it may open low ports like the agent.
        studentBinds898: true,
        log: ["enable exited 0 ready-sent=yes"],
      });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 30_000);
});
