// Test helper, run as its own process by an ordinary user (guest-one-uid.test.ts): boots a guest with
// the boot contract and prints, as one JSON line, what the guest's only uid could do. The ordinary
// user has no cgroup of its own here, so a guest is refused until it accepts guests without cgroup
// limits; what still holds it then (the process rlimit, the disk) is measured too.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGuest } from "../sandbox/guest.ts";
import { guestImageFor } from "../boot/images.ts";
import { contractUserData } from "./boot-contract.ts";
import { runInConsole } from "./console-command.ts";

const rootDir = await mkdtemp(join(tmpdir(), "lab-one-uid-"));
const pids = 128;
try {
  const options = {
    name: "one-uid-vm",
    rootDir,
    image: guestImageFor("quay.io/containerdisks/fedora:41"),
    userData: contractUserData(),
    limits: { pids },
  };
  const refused = await startGuest(options).then(
    async (guest) => {
      await guest.kill();
      return null;
    },
    (error: unknown) => (error as Error).message,
  );
  const guest = await startGuest({ ...options, acceptUnlimited: true });
  await new Promise<void>((resolve) => {
    if (guest.agentConnected) resolve();
    guest.on("agent", (connected) => connected && resolve());
  });
  const socket = await guest.connect(899);
  const agent = await new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("end", () => resolve(text));
  });
  const id = await runInConsole(guest, "id -u; stat -c %u /etc/lab-agent/key");
  const bind = await runInConsole(
    guest,
    `python3 -c 'import socket; socket.socket().bind(("0.0.0.0", 898))'`,
  );
  // Bounded: at most 1000 children, each gone after 20 s.
  const bomb = await runInConsole(
    guest,
    `python3 -c 'import os, time\nn = 0\nfor i in range(1000):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(20)\n        os._exit(0)\n    n += 1\nprint("forked", n)'`,
    30_000,
  );
  const forked = Number(/forked (\d+)/.exec(bomb.output)?.[1] ?? "NaN");
  const result = {
    refused,
    agent,
    ids: id.output.trim().split("\n"),
    studentBinds898: bind.status === 0,
    log: guest.consoleLogLines().filter((line) => line.startsWith("enable exited")),
    forkBombHeld: forked < pids,
    forked,
  };
  await guest.kill();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await rm(rootDir, { recursive: true, force: true });
}
