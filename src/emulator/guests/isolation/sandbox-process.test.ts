import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../../../common/testing/patience.ts";
import { continueProcesses, type ProcessIdentity } from "./sandbox-process.ts";

// A parent that follows its child's stops, as util-linux script (the guest console's PTY holder)
// does: when it runs again and waitpid says its child is stopped, it stops itself. It is slow to
// do so (sleeps first), as a busy machine schedules it late.
const followerParent = String.raw`
import os, signal, sys, time
child = os.fork()
if child == 0:
    while True:
        time.sleep(0.01)
def on_continued(*_):
    pid, status = os.waitpid(child, os.WUNTRACED | os.WNOHANG)
    if pid and os.WIFSTOPPED(status):
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGSTOP)
        os.kill(child, signal.SIGCONT)
signal.signal(signal.SIGCONT, on_continued)
print(child, flush=True)
while True:
    time.sleep(1)
`;

const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
});

async function stat(pid: number): Promise<{ state: string; startTime: string }> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, startTime: fields[19]! };
}

async function identity(pid: number): Promise<ProcessIdentity> {
  return { pid, startTime: (await stat(pid)).startTime };
}

describe("continuing a paused guest's processes", () => {
  it("leaves a parent that follows its child's stops running: the child goes on first", async () => {
    const parent = spawn("python3", ["-c", followerParent], { stdio: ["ignore", "pipe", "inherit"] });
    started.push(parent.pid!);
    const [line] = (await once(parent.stdout, "data")) as [Buffer];
    const child = Number(line.toString().trim());
    started.push(child);
    // Paused as stopNamespace pauses a guest: the parent first (in /proc's order), then its child.
    process.kill(parent.pid!, "SIGSTOP");
    process.kill(child, "SIGSTOP");
    await eventually(
      async () => [(await stat(parent.pid!)).state, (await stat(child)).state],
      (states) => states.every((state) => state === "T"),
      { what: "both processes stopped" },
    );

    await continueProcesses([await identity(parent.pid!), await identity(child)]);
    // Longer than the parent takes to stop itself when it saw its child stopped.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await stat(parent.pid!)).state).not.toBe("T");
    expect((await stat(child)).state).not.toBe("T");
  });
});
