// The agent's terminals (docs/agent.md, "Terminals"), against src/agent/lab_agent/ as a real process
// and the BFF's own client for them (server/terminals/agent-terminal.ts) over TCP: a shell on a PTY
// of its own, sized by frames, ended with its connection, and nothing but signed frames accepted.
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Notice } from "../server/console/notices.ts";
import { UpstreamRefusedError } from "../server/console/upstream.ts";
import { signAgentRequest } from "../server/agent/signature.ts";
import type { OpenTerminal, TerminalLine } from "../server/console/terminal-line.ts";
import { createTerminalOpener, terminalUpgrade } from "../server/terminals/agent-terminal.ts";
import { TerminalFrameSigner, terminalFrameTypes } from "../server/terminals/terminal-frames.ts";
import { waitFor } from "../common/testing/patience.ts";
import { createAgentFixture, isProcessAlive, type AgentFixture } from "./testing/agent-fixture.ts";
import { startAgent, type AgentProcess } from "./testing/python-agent.ts";

let fixture: AgentFixture;
let agent: AgentProcess;
let openTerminal: OpenTerminal;
const lines: TerminalLine[] = [];

function tcp(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(agent.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

beforeAll(async () => {
  fixture = await createAgentFixture();
  agent = await startAgent({ keyFile: fixture.keyFile, user: fixture.user, home: fixture.home });
  openTerminal = createTerminalOpener({ connect: tcp, keyFor: () => fixture.key });
});

afterAll(async () => {
  for (const line of lines) line.close();
  await agent?.stop();
  await fixture?.remove();
});

/** A terminal as a console holds it: its output as text, and how it ended. */
class Shell {
  output = "";
  lost = false;
  ended: Notice | undefined;

  private constructor(readonly line: TerminalLine) {
    line.listen({
      output: (chunk) => (this.output += chunk.toString("utf8")),
      lost: () => (this.lost = true),
      ended: (notice) => (this.ended = notice),
    });
  }

  static async open(size = { cols: 80, rows: 24 }): Promise<Shell> {
    const line = await openTerminal("session", size, new AbortController().signal);
    lines.push(line);
    return new Shell(line);
  }

  /** Runs a command; resolves with what it printed before its marker, the echoed line left out. */
  async run(command: string): Promise<string> {
    const marker = `done-${Math.random().toString(36).slice(2)}`;
    const typed = `${command}; echo ${marker.slice(0, 4)}''${marker.slice(4)}`;
    const from = this.output.length;
    this.line.send(Buffer.from(`${typed}\r`));
    await waitFor(() => this.output.includes(marker, from), `${command} to finish`, 10_000);
    // Bash 5.1 turns bracketed paste off before each command's output (ESC [?2004l).
    const printed = this.output
      .slice(from, this.output.indexOf(marker, from))
      .replaceAll("\u001b[?2004l", "")
      .replaceAll("\u001b[?2004h", "")
      .replace(/\r/g, "");
    // The last echo of the line: a shell still starting gets it echoed by the PTY and again by readline.
    const afterEcho = printed.lastIndexOf(typed) + typed.length;
    return printed.slice(printed.indexOf("\n", afterEcho) + 1);
  }
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

describe("an agent terminal", () => {
  it("is the student's shell on a PTY of its own, as big as asked", async () => {
    const shell = await Shell.open({ cols: 90, rows: 20 });
    expect(await shell.run("tty")).toMatch(/^\/dev\/pts\/\d+/);
    expect(await shell.run("stty size")).toMatch(/^20 90/);
    expect((await shell.run("id -un")).trim()).toBe(fixture.user);
    expect((await shell.run("pwd")).trim()).toBe(fixture.home);
    expect((await shell.run("echo $TERM")).trim()).toBe("xterm-256color");
  });

  it("takes a new size as a frame, and the foreground program gets SIGWINCH", async () => {
    const shell = await Shell.open();
    // Ready once bash has run the trap: its echo of the typed line comes before that, from the terminal.
    shell.line.send(
      Buffer.from("trap 'echo winched-$(stty size)' WINCH; echo trap''-set; sleep 30 & wait\r"),
    );
    await waitFor(() => shell.output.includes("trap-set"), "the trap to be set");
    shell.line.resize({ cols: 132, rows: 40 });
    await waitFor(() => shell.output.includes("winched-40 132"), "the shell to hear its new size");
    expect(await shell.run("stty size")).toMatch(/^40 132/);
  });

  it("reports the shell's exit, then closes", async () => {
    const shell = await Shell.open();
    shell.line.send(Buffer.from("exit 3\r"));
    await waitFor(() => shell.ended !== undefined, "the exit");
    expect(shell.ended).toMatchObject({ reason: "shell_exited", params: { how: "3" } });
    expect(shell.lost).toBe(false);
  });

  it("ends the shell and what it runs when the BFF closes the line", async () => {
    const shell = await Shell.open();
    // Bash announces the job ("[1] PID") before the echo's line.
    const pid = Number((await shell.run("sleep 600 & echo $!")).trim().split("\n").at(-1));
    expect(isProcessAlive(pid)).toBe(true);
    shell.line.close();
    await waitFor(() => !isProcessAlive(pid), "the shell's job to end", 5_000);
  });

  it("reads no faster than the line is read: a paused line holds a flood in the guest", async () => {
    const shell = await Shell.open();
    await shell.run("true");
    shell.line.pause();
    shell.line.send(Buffer.from("yes flood-line-of-some-length | head -c 200000000 > /dev/stdout\r"));
    const before = rssKiB(agent.pid);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Kernel buffers fill (a few hundred KiB) and then the PTY blocks the writer.
    expect(rssKiB(agent.pid) - before).toBeLessThan(8 * 1024);
    const held = shell.output.length;
    expect(held).toBeLessThan(4 * 1024 * 1024);
    shell.line.send(Buffer.from("\x03"));
    shell.line.resume();
    expect(await shell.run("echo after-flood")).toContain("after-flood");
  });

  it("closes a line whose frames are not signed with the session's key", async () => {
    const target = "/v1/terminal?rows=24&cols=80";
    const signed = signAgentRequest(fixture.key, "GET", target, Buffer.alloc(0));
    const socket = await new Promise<Duplex>((resolve, reject) => {
      const upgrade = request({
        port: agent.port,
        host: "127.0.0.1",
        path: target,
        headers: { connection: "Upgrade", upgrade: terminalUpgrade, authorization: signed.authorization },
      });
      upgrade.once("upgrade", (_response, upgraded: Duplex) => resolve(upgraded));
      upgrade.once("response", (response) => reject(new Error(`answered ${response.statusCode}`)));
      upgrade.once("error", reject);
      upgrade.end();
    });
    let closed = false;
    socket.on("close", () => (closed = true));
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    const forger = new TerminalFrameSigner("not-the-session-key-at-all", signed.nonce, "in");
    socket.write(forger.frame(terminalFrameTypes.data, Buffer.from("echo forged\r")));
    await waitFor(() => closed, "the agent to close the forged line");
  });

  it("refuses a size out of range, signed, before any shell starts", async () => {
    const refused = await openTerminal("session", { cols: 0, rows: 24 }, new AbortController().signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UpstreamRefusedError);
    expect((refused as UpstreamRefusedError).notice.reason).toBe("terminal_refused");
    expect((refused as UpstreamRefusedError).final).toBe(true);
  });
});
