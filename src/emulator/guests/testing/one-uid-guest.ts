// Test helper, run as its own process by an ordinary user (guest-one-uid.test.ts): boots a guest with
// the boot contract and prints, as one JSON line, what the guest's only uid could do.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGuest } from "../guest.ts";
import { guestImageFor } from "../images.ts";
import { contractUserData } from "./boot-contract.ts";
import { runInConsole } from "./console-command.ts";

const rootDir = await mkdtemp(join(tmpdir(), "lab-one-uid-"));
try {
  const guest = await startGuest({
    name: "one-uid-vm",
    rootDir,
    image: guestImageFor("quay.io/containerdisks/fedora:41"),
    userData: contractUserData(),
  });
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
  const result = {
    agent,
    ids: id.output.trim().split("\n"),
    studentBinds898: bind.status === 0,
    log: guest.consoleLogLines().filter((line) => line.startsWith("enable exited")),
  };
  await guest.kill();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await rm(rootDir, { recursive: true, force: true });
}
