// The port relay against the security review's H4: run by an ordinary user, a student (the guest's
// one uid) took the relay's channel to the emulator with pidfd_getfd(2) and killed the emulator, every
// guest with it, with one line of junk. Now the student finds no channel to take, and whatever a relay
// gone bad sends the emulator ends at most that guest's port-forwarding, with a logged reason.
import { patient, patiently } from "../../../common/testing/patience.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGuest, type Guest } from "../sandbox/guest.ts";
import { runsPrivileged } from "../isolation/sandbox.ts";
import { runInConsole } from "../testing/console-command.ts";
import { echoServerCommand } from "../testing/echo-server.ts";
import { ordinaryUid, runAsOrdinaryUser } from "../testing/as-ordinary-user.ts";
import { answerAsRelay, relayPidOf, writeAsRelay } from "../testing/relay-hijack.ts";

const oneUidScript = fileURLToPath(new URL("../testing/one-uid-channels.ts", import.meta.url));

describe.runIf(runsPrivileged())("a guest of an emulator run by an ordinary user", () => {
  it("holds no channel to the emulator that the student could take, and port-forwarding works", async () => {
    expect(await runAsOrdinaryUser(oneUidScript)).toEqual({
      uid: String(ordinaryUid),
      channelsToTheEmulator: [],
      echoed: "still forwarded",
    });
  }, 30_000);
});

const payloads: [string, Buffer][] = [
  ["a line of junk", Buffer.from("not json at all\n")],
  ["a 16 MiB line", Buffer.alloc(16 << 20, "x")],
  ["binary garbage", Buffer.from(Array.from({ length: 1 << 16 }, (_, index) => (index * 7919) % 256))],
];

describe.runIf(runsPrivileged())("a port relay gone bad", () => {
  const userData = `#cloud-config\nruncmd:\n  - ${JSON.stringify(echoServerCommand(8099))}\n`;
  const warnings: string[] = [];
  let rootDir: string;
  let bystander: Guest;
  let answering: Guest;
  const victims = new Map<string, Guest>();

  async function echo(guest: Guest, text: string): Promise<string> {
    const socket = await guest.connect(8099);
    try {
      return await new Promise<string>((resolve, reject) => {
        socket.once("data", (chunk: Buffer) => resolve(chunk.toString()));
        socket.once("error", reject);
        socket.write(text);
      });
    } finally {
      socket.destroy();
    }
  }

  async function bootedWithEcho(name: string): Promise<Guest> {
    const guest = await startGuest({ name, rootDir, userData });
    await vi.waitFor(() => echo(guest, "up"), patiently(10_000, 50));
    return guest;
  }

  const warnedAbout = (guest: Guest) =>
    warnings.filter((line) => line.includes(`guest ${guest.name}`) && line.includes("port relay"));

  beforeAll(async () => {
    vi.spyOn(console, "warn").mockImplementation((...parts: unknown[]) => {
      warnings.push(parts.map(String).join(" "));
    });
    rootDir = await mkdtemp(join(tmpdir(), "lab-relay-junk-test-"));
    const names = payloads.map((_, index) => `victim-${index}`);
    const guests = await Promise.all(
      ["bystander", "answering", ...names].map((name) => bootedWithEcho(name)),
    );
    [bystander, answering] = guests as [Guest, Guest];
    names.forEach((name, index) => victims.set(name, guests[index + 2] as Guest));
  }, patient(30_000));

  afterAll(async () => {
    vi.restoreAllMocks();
    await Promise.all([bystander, answering, ...victims.values()].map((guest) => guest?.kill()));
    await rm(rootDir, { recursive: true, force: true });
  });

  it.each(payloads.map(([what, payload], index) => [what, payload, `victim-${index}`] as const))(
    "%s in the relay's channels ends that guest's port-forwarding only, and says why",
    async (_, payload, name) => {
      const guest = victims.get(name) as Guest;
      const written = await writeAsRelay(await relayPidOf(guest), payload);
      expect(Object.keys(written).length).toBeGreaterThan(0);

      await vi.waitFor(() => expect(warnedAbout(guest)).not.toEqual([]), patiently(5000));
      await expect(guest.connect(8099)).rejects.toMatchObject({ code: "EIO" });
      // The guest runs on; so does every other guest, port-forwarding included.
      expect((await runInConsole(guest, "echo al''ive")).output).toBe("alive\n");
      expect(await echo(bystander, "unharmed")).toBe("unharmed");
    },
    20_000,
  );

  it(
    "fails a connection the relay answers with junk, says why, and serves the next one",
    async () => {
      const relay = await relayPidOf(answering);
      const impostor = answerAsRelay(
        relay,
        payloads.map(([, payload]) => payload),
      );
      await impostor.ready;
      try {
        for (let index = 0; index < payloads.length; index++) {
          await expect(answering.connect(8099)).rejects.toMatchObject({ code: "EIO" });
        }
        await impostor.done;
      } finally {
        process.kill(relay, "SIGCONT");
      }
      expect(warnedAbout(answering)).toHaveLength(payloads.length);
      expect(await echo(answering, "served again")).toBe("served again");
      expect(await echo(bystander, "unharmed")).toBe("unharmed");
    },
    patient(30_000),
  );
});
