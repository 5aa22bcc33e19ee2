// Sizing the guest and seeing who watches, over real sockets: browsers (ws clients with the SPA's
// protocol) -> BFF -> the emulator's console and port-forward subresources -> a sandboxed guest, whose
// grading agent (src/agent/lab_agent/, started by its systemd) sets the size of its /dev/ttyS0.
import { patient } from "../../common/testing/patience.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsoleServerMessage } from "../../common/console-protocol.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { ConsoleTestClient, signInCookie } from "./testing/console-client.ts";

const noAgentImage = "registry.example.org/labs/no-python:1";
const stockLab = aLab({ id: "fit-lab", title: "Fit lab" });
const noAgentLab = aLab({
  id: "no-agent-lab",
  title: "No agent",
  vm: { cpu: 1, memory: "512Mi", image: noAgentImage, nested: false, cloudInit: null },
});

let emulator: TestEmulator;
let bff: TestBff;
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({
    guests: "sandbox",
    deployRbac: true,
    cluster: {
      // Without python3 the agent cannot start: a VM whose image has no agent.
      images: [
        { image: noAgentImage, commands: ["sh", "bash", "stty", "echo", "cat", "sleep", "systemctl"] },
      ],
    },
  });
  bff = await startTestBff({ labs: [stockLab, noAgentLab], emulator });
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function open(sessionId: string, who: string, mode?: "observe"): Promise<ConsoleTestClient> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, who),
    mode,
  });
  clients.push(client);
  await client.untilLive();
  return client;
}

const messagesOf = <T extends ConsoleServerMessage["type"]>(client: ConsoleTestClient, type: T) =>
  client.messages.filter((message) => message.type === type);

describe("fitting the guest to a window", () => {
  it("resizes vim through the agent (SIGWINCH) and types nothing into it", async () => {
    const sessionId = await launchRunning(await bff.signIn("alice"), stockLab.id);
    const alice = await open(sessionId, "alice");
    // vim records each resize it sees, with whether its buffer changed: typed text would change it.
    const onResize =
      'autocmd VimResized * call writefile(["size " . &lines . "x" . &columns . " modified " . &modified], expand("~/vim-sizes"), "a")';
    alice.type(`vi -u NONE -N -c '${onResize}' -c 'echo "vim-"."ready"'\r`);
    await alice.untilScreenShows("vim-ready");

    alice.send({ type: "fit-guest", cols: 100, rows: 30 });
    await alice.until(
      () => alice.lastMessage("guest-size")?.cols === 100,
      "the guest resized to 100 columns",
      20_000,
    );
    expect(alice.lastMessage("guest-size")).toEqual({ type: "guest-size", cols: 100, rows: 30 });
    expect(messagesOf(alice, "fit-failed")).toEqual([]);

    // :q refuses a modified buffer (E37), so reaching the prompt again means nothing was typed.
    alice.type("\x1b:q\r");
    await alice.until(() => /\$\s*$/.test(alice.screen()), "the shell's prompt after vim");
    alice.type("cat ~/vim-sizes; stty size; echo cat-''done\r");
    await alice.untilScreenShows("cat-done");
    await alice.untilScreenShows("size 30x100 modified 0");
    await alice.untilScreenShows("30 100");
    expect(alice.screen()).not.toContain("E37");
    expect(alice.screen()).not.toContain("stty rows");
  });

  it("says the agent cannot be reached on a VM without it, types nothing and keeps the size", async () => {
    const sessionId = await launchRunning(await bff.signIn("bob"), noAgentLab.id);
    const bob = await open(sessionId, "bob");
    bob.send({ type: "fit-guest", cols: 120, rows: 40 });
    await bob.until(() => messagesOf(bob, "fit-failed").length > 0, "the fit to fail", 20_000);
    expect(bob.lastMessage("fit-failed")).toEqual({
      type: "fit-failed",
      code: "agent-unreachable",
      cols: 120,
      rows: 40,
    });
    expect(bob.lastMessage("guest-size")).toEqual({ type: "guest-size", cols: 80, rows: 24 });
    // The agent did not answer its check, so no screen changed size and back: one size, the first.
    expect(messagesOf(bob, "guest-size")).toHaveLength(1);

    bob.type("stty size; echo size-''shown\r");
    await bob.untilScreenShows("size-shown");
    expect(bob.screen()).toContain("24 80");
    expect(bob.screen()).not.toContain("stty rows");
  });
});

describe("who is watching", () => {
  it("lists every viewer to everyone, with name, role and who types, as they come and go", async () => {
    const sessionId = await launchRunning(await bff.signIn("carol"), stockLab.id);
    const carol = await open(sessionId, "carol");
    expect(carol.lastMessage("viewers")).toEqual({
      type: "viewers",
      viewers: [{ username: "carol", role: "student", mode: "type" }],
      holder: "carol",
    });

    const joinedAt = performance.now();
    const tara = await open(sessionId, "tara", "observe");
    await carol.until(() => carol.lastMessage("viewers")?.viewers.length === 2, "tara listed");
    expect(performance.now() - joinedAt).toBeLessThan(patient(1000));
    const both = {
      type: "viewers",
      viewers: [
        { username: "carol", role: "student", mode: "type" },
        { username: "tara", role: "ta", mode: "observe" },
      ],
      holder: "carol",
    };
    expect(carol.lastMessage("viewers")).toEqual(both);
    expect(tara.lastMessage("viewers")).toEqual(both);

    tara.send({ type: "take-keyboard" });
    const taken = {
      type: "viewers",
      viewers: [
        { username: "carol", role: "student", mode: "observe" },
        { username: "tara", role: "ta", mode: "type" },
      ],
      holder: "tara",
    };
    await carol.until(() => carol.lastMessage("viewers")?.holder === "tara", "tara holding the keyboard");
    expect(carol.lastMessage("viewers")).toEqual(taken);

    // A second window of the same person is one entry; the owner's read-only window never types.
    const carolWatching = await open(sessionId, "carol", "observe");
    expect(carolWatching.lastMessage("viewers")).toEqual(taken);

    tara.close();
    await carol.until(() => carol.lastMessage("viewers")?.viewers.length === 1, "tara gone");
    expect(carol.lastMessage("viewers")).toEqual({
      type: "viewers",
      viewers: [{ username: "carol", role: "student", mode: "type" }],
      holder: "carol",
    });
  });
});
