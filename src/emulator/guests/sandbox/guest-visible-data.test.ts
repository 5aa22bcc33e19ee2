// The emulator refuses to give guests a view of its own secrets: a state directory, a kubeconfig's
// folder (the BFF's DATA_DIR, with the session secret beside it) or the program's checkout in a folder
// the guests' sandbox mounts (the security review's H4 read DATA_DIR from a guest).
import { spawn } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator } from "../../emulator.ts";
import { guestVisibleDataProblem } from "./sandbox-guests.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";

// Creating folders under /usr and /opt needs root, as the tests here run.
describe.runIf(runsPrivileged())("starting an emulator with guests", () => {
  let underUsr: string;
  let underOpt: string;
  let scratch: string;

  beforeAll(async () => {
    underUsr = await mkdtemp("/usr/local/lab-data-dir-test-");
    underOpt = await mkdtemp("/opt/lab-data-dir-test-");
    scratch = await mkdtemp(join(tmpdir(), "lab-data-dir-test-"));
  });

  afterAll(async () => {
    for (const dir of [underUsr, underOpt, scratch]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses a DATA_DIR in /usr, as the BFF starts it, saying where and what to do", async () => {
    const { code, stderr } = await runEmulator([
      "--port",
      "0",
      "--timing",
      "fast",
      "--state-dir",
      join(underUsr, "emulator"),
      "--kubeconfig",
      join(underUsr, "kubeconfig"),
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${underUsr}/emulator`);
    expect(stderr).toContain("lies in /usr, which every guest sees");
    expect(stderr).toContain("--guests none");
  });

  it("refuses a kubeconfig whose folder guests see, even through a symlink", async () => {
    const link = join(scratch, "data");
    await symlink(underUsr, link);
    await expect(
      createEmulator({
        port: 0,
        timing: "fast",
        stateDir: join(scratch, "state"),
        kubeconfigPath: join(link, "kubeconfig"),
        guests: "sandbox",
      }),
    ).rejects.toThrow(`the folder of the kubeconfig ${link}, which is ${underUsr}, lies in /usr`);
  });

  it("starts with a DATA_DIR in /opt, which no guest sees, and with any DATA_DIR without guests", async () => {
    for (const [dir, guests] of [
      [underOpt, "sandbox"],
      [underUsr, "none"],
    ] as const) {
      const emulator = await createEmulator({
        port: 0,
        timing: "fast",
        stateDir: join(dir, guests, "emulator"),
        kubeconfigPath: join(dir, guests, "kubeconfig"),
        guests,
      });
      await emulator.close();
    }
  });
});

describe("guestVisibleDataProblem", () => {
  it("names a checkout in a folder guests see, whether or not it exists yet", () => {
    expect(guestVisibleDataProblem([{ what: "the checkout", path: "/usr/src/lab-console" }])).toContain(
      "the checkout /usr/src/lab-console lies in /usr, which every guest sees",
    );
    expect(guestVisibleDataProblem([{ what: "the checkout", path: "/srv/lab-console" }])).toBeUndefined();
  });
});

function runEmulator(flags: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/emulator/main.ts", ...flags], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
