// The built single file, run the way a guest runs it: `node lab-agent.mjs --port 0 ...`.
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAgent } from "../../scripts/build-agent.ts";
import { AgentHealth } from "../common/grading.ts";
import { createAgentFixture, waitFor, type AgentFixture } from "./testing/agent-fixture.ts";

let fixture: AgentFixture;
let bundle: string;
const running: ChildProcess[] = [];

function runBundle(args: string[]) {
  const child = spawn(process.execPath, [bundle, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output, exited };
}

beforeAll(async () => {
  fixture = await createAgentFixture();
  bundle = join(fixture.dir, "lab-agent.mjs");
  await buildAgent(bundle);
});

afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
  await fixture.remove();
});

describe("the built agent", () => {
  it("is one executable file with a node shebang", async () => {
    expect((await readFile(bundle, "utf8")).startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect((await stat(bundle)).mode & 0o111).toBe(0o111);
  });

  it("listens, answers health with the token, and stops cleanly on SIGTERM", async () => {
    const args = [
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--token-file",
      fixture.tokenFile,
      "--home",
      fixture.home,
    ];
    const agent = runBundle(fixture.user ? [...args, "--user", fixture.user] : args);
    const listening = /listening on 127\.0\.0\.1:(\d+)/;
    await waitFor(() => listening.test(agent.output.stdout), "the agent to listen");
    const port = listening.exec(agent.output.stdout)?.[1];

    const response = await fetch(`http://127.0.0.1:${port}/v1/health`, {
      headers: { Authorization: `Bearer ${fixture.token}` },
    });
    expect(response.status).toBe(200);
    expect(AgentHealth.parse(await response.json()).runAs).toEqual({
      user: fixture.expectedUser,
      home: fixture.home,
    });

    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(agent.output.stdout).toContain("GET /v1/health 200");
  });

  it("prints its usage for --help", async () => {
    const agent = runBundle(["--help"]);
    expect(await agent.exited).toBe(0);
    expect(agent.output.stdout).toMatch(/^Usage: lab-agent/);
    expect(agent.output.stdout).toContain("--token-file VALUE");
  });

  it("exits with status 2 and says what is wrong with its settings", async () => {
    const agent = runBundle(["--port", "http", "--colour"]);
    expect(await agent.exited).toBe(2);
    expect(agent.output.stderr).toContain('port must be a whole number from 0 to 65535, not "http".');
    expect(agent.output.stderr).toContain('Unknown argument "--colour" (see --help).');
  });
});
