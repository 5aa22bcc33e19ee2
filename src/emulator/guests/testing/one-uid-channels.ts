// Test helper, run as its own process by an ordinary user (port-relay.test.ts): boots a guest, which
// then has one uid for everything in it, and prints as one JSON line which channels to the emulator
// the student could take from the guest's processes (channel-sweep.ts), and whether port-forwarding
// still reaches a server in the guest.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGuest } from "../sandbox/guest.ts";
import { channelSweepCommand } from "./channel-sweep.ts";
import { runInConsole } from "./console-command.ts";
import { echoServerCommand } from "./echo-server.ts";

const rootDir = await mkdtemp(join(tmpdir(), "lab-one-uid-channels-"));
try {
  const guest = await startGuest({
    name: "one-uid-channels",
    rootDir,
    userData: `#cloud-config\nruncmd:\n  - ${JSON.stringify(echoServerCommand(8099))}\n`,
    // The ordinary user has no cgroup of its own here.
    acceptUnlimited: true,
  });
  await new Promise<void>((resolve) => {
    if (guest.agentConnected) resolve();
    guest.on("agent", (connected) => connected && resolve());
  });
  const sweep = await runInConsole(guest, channelSweepCommand());
  // runcmd starts the server in the background: it may bind a moment after the agent connected.
  let socket: Awaited<ReturnType<typeof guest.connect>> | undefined;
  for (let attempt = 0; !socket; attempt++) {
    socket = await guest.connect(8099).catch((error: unknown) => {
      if (attempt >= 100) throw error;
      return new Promise<undefined>((resolve) => setTimeout(resolve, 50));
    });
  }
  const echoed = await new Promise<string>((resolve, reject) => {
    socket.once("data", (chunk: Buffer) => resolve(chunk.toString()));
    socket.once("error", reject);
    socket.write("still forwarded");
  });
  socket.destroy();
  const result = {
    uid: (await runInConsole(guest, "id -u")).output.trim(),
    channelsToTheEmulator: JSON.parse(sweep.output.trim().split("\n").at(-1) ?? "null") as unknown,
    echoed,
  };
  await guest.kill();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await rm(rootDir, { recursive: true, force: true });
}
