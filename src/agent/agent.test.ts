// The agent over real HTTP on 127.0.0.1, running real shell commands.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLimits, type AgentCheckSpec } from "../common/agent-protocol.ts";
import { AgentCheckResponse, AgentErrorBody, AgentHealth, type AgentCheckResult } from "../common/grading.ts";
import type { AgentConfig } from "./config.ts";
import { startAgentServer, type AgentServer } from "./server.ts";
import {
  createAgentFixture,
  isProcessAlive,
  readPid,
  waitFor,
  type AgentFixture,
} from "./testing/agent-fixture.ts";

let fixture: AgentFixture;
let agent: AgentServer;
const started: AgentServer[] = [];

async function startAgent(overrides: Partial<AgentConfig> = {}): Promise<AgentServer> {
  const config: AgentConfig = {
    host: "127.0.0.1",
    port: 0,
    tokenFile: fixture.tokenFile,
    user: fixture.user,
    home: fixture.home,
    tty: "/dev/null-tty",
    ...overrides,
  };
  const server = await startAgentServer(config, () => {});
  started.push(server);
  return server;
}

function call(
  path: string,
  init: {
    method?: string;
    body?: unknown;
    token?: string | null;
    server?: AgentServer;
    signal?: AbortSignal;
  } = {},
) {
  const token = init.token === undefined ? fixture.token : init.token;
  return fetch(`http://127.0.0.1:${(init.server ?? agent).port}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: token === null ? {} : { Authorization: `Bearer ${token}` },
    body:
      init.body === undefined
        ? undefined
        : typeof init.body === "string"
          ? init.body
          : JSON.stringify(init.body),
    signal: init.signal,
  });
}

async function errorOf(response: Response) {
  return AgentErrorBody.parse(await response.json()).error;
}

async function runChecks(...checks: AgentCheckSpec[]): Promise<AgentCheckResult[]> {
  const response = await call("/v1/checks", { body: { checks } });
  expect(response.status).toBe(200);
  return AgentCheckResponse.parse(await response.json()).results;
}

async function runOne(run: string, timeoutSeconds = 10): Promise<AgentCheckResult> {
  const [result] = await runChecks({ id: "only", run, timeoutSeconds });
  if (!result) throw new Error("no result");
  return result;
}

beforeAll(async () => {
  fixture = await createAgentFixture();
  agent = await startAgent();
});

afterAll(async () => {
  await Promise.all(started.map((server) => server.close()));
  await fixture.remove();
});

describe("authentication", () => {
  it("refuses a request without a token, and reveals no routes", async () => {
    for (const path of ["/v1/health", "/v1/nothing-here"]) {
      const response = await call(path, { token: null });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      expect((await errorOf(response)).code).toBe("unauthenticated");
    }
  });

  it("refuses a wrong token and runs nothing", async () => {
    const marker = join(fixture.home, "wrong-token-ran");
    const response = await call("/v1/checks", {
      token: "f".repeat(64),
      body: { checks: [{ id: "a", run: `touch ${marker}`, timeoutSeconds: 5 }] },
    });
    expect(response.status).toBe(401);
    expect(() => execFileSync("test", ["-e", marker])).toThrow();
  });

  it("answers health with the right token", async () => {
    const response = await call("/v1/health");
    expect(response.status).toBe(200);
    expect(AgentHealth.parse(await response.json())).toEqual({
      status: "ok",
      version: expect.any(String),
      runAs: { user: fixture.expectedUser, home: fixture.home },
    });
  });

  it("does nothing while there is no token file", async () => {
    const server = await startAgent({ tokenFile: join(fixture.dir, "not-written-yet") });
    const response = await call("/v1/health", { server });
    expect(response.status).toBe(503);
    expect((await errorOf(response)).code).toBe("no_token");
  });
});

describe("checks", () => {
  it("runs each check as the configured user in their home, with a clean environment", async () => {
    const [who, fails] = await runChecks(
      // VITEST is set in this process: the check must not see the agent's environment.
      { id: "who", run: "id -un; pwd; printenv VITEST || echo no-VITEST", timeoutSeconds: 10 },
      { id: "fails", run: "echo he''llo; echo oops >&2; exit 3", timeoutSeconds: 10 },
    );
    expect(who).toMatchObject({ id: "who", exitCode: 0, signal: null, timedOut: false, score: null });
    expect(who?.output).toBe(`${fixture.expectedUser}\n${fixture.home}\nno-VITEST\n`);
    expect(fails).toMatchObject({ id: "fails", exitCode: 3, timedOut: false });
    expect(fails?.output).toContain("hello\n");
    expect(fails?.output).toContain("oops\n");
  });

  it("reads partial credit from the last line of stdout only", async () => {
    const [partial, onStderr, notLast] = await runChecks(
      { id: "partial", run: "echo 'two of four'; echo score=0.5", timeoutSeconds: 10 },
      { id: "on-stderr", run: "echo score=0.5 >&2", timeoutSeconds: 10 },
      { id: "not-last", run: "echo score=0.5; echo done", timeoutSeconds: 10 },
    );
    expect(partial?.score).toBe(0.5);
    expect(onStderr?.score).toBeNull();
    expect(notLast?.score).toBeNull();
  });

  it("kills the whole process tree when a check times out", async () => {
    const childPidFile = join(fixture.home, "timeout-child.pid");
    const shellPidFile = join(fixture.home, "timeout-shell.pid");
    const result = await runOne(
      `sleep 100 & echo $! > ${childPidFile}; echo $$ > ${shellPidFile}; wait`,
      0.5,
    );
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" });
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
    const pids = [readPid(childPidFile), readPid(shellPidFile)];
    expect(pids.every((pid) => pid !== null)).toBe(true);
    await waitFor(() => pids.every((pid) => !isProcessAlive(pid ?? 0)), "the check's processes to end");
  });

  it("kills what a finished check left running in the background", async () => {
    const pidFile = join(fixture.home, "leftover.pid");
    const result = await runOne(`sleep 100 & echo $! > ${pidFile}; echo started`);
    expect(result).toMatchObject({ exitCode: 0, output: "started\n" });
    const pid = readPid(pidFile);
    expect(pid).not.toBeNull();
    await waitFor(() => !isProcessAlive(pid ?? 0), "the leftover sleep to end");
  });

  it("keeps the tail of an output above the cap", async () => {
    const result = await runOne("seq 1 40000");
    expect(result.outputTruncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBe(agentLimits.outputBytes);
    expect(result.output.endsWith("\n39999\n40000\n")).toBe(true);
  });

  it("kills a running check when the client goes away", async () => {
    const pidFile = join(fixture.home, "abandoned.pid");
    const abandon = new AbortController();
    const pending = call("/v1/checks", {
      signal: abandon.signal,
      body: { checks: [{ id: "slow", run: `echo $$ > ${pidFile}; exec sleep 100`, timeoutSeconds: 60 }] },
    }).catch((error: unknown) => error);
    await waitFor(() => readPid(pidFile) !== null, "the check to start");
    abandon.abort();
    await pending;
    await waitFor(() => !isProcessAlive(readPid(pidFile) ?? 0), "the abandoned check to end");
  });

  it("explains what is wrong with a malformed request", async () => {
    const response = await call("/v1/checks", {
      body: {
        checks: [
          { id: "a", run: " ", timeoutSeconds: 0 },
          { id: "a", run: "true", timeoutSeconds: 1 },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toEqual({
      code: "invalid",
      message:
        "checks[0].run must be a command of 1 to 16384 characters. " +
        "checks[0].timeoutSeconds must be a number above 0 and at most 3600. " +
        'checks[1].id "a" appears twice.',
    });
    const notJson = await call("/v1/checks", { body: "{checks:" });
    expect(await errorOf(notJson)).toEqual({
      code: "invalid",
      message: "The request body is not valid JSON.",
    });
  });

  it("reports a missing home as unavailable instead of failing the checks", async () => {
    const server = await startAgent({ home: join(fixture.dir, "no-such-home") });
    const response = await call("/v1/checks", {
      server,
      body: { checks: [{ id: "a", run: "true", timeoutSeconds: 1 }] },
    });
    expect(response.status).toBe(503);
    expect(await errorOf(response)).toMatchObject({ code: "run_as_unavailable" });
  });
});

describe("limits and routing", () => {
  const bigBody = JSON.stringify({
    checks: [{ id: "a", run: "x".repeat(agentLimits.bodyBytes), timeoutSeconds: 1 }],
  });

  it("refuses a body over the cap by its Content-Length", async () => {
    const response = await call("/v1/checks", { body: bigBody });
    expect(response.status).toBe(413);
    expect((await errorOf(response)).code).toBe("too_large");
  });

  it("refuses a chunked body once it grows over the cap", async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: agent.port,
          path: "/v1/checks",
          method: "POST",
          headers: { Authorization: `Bearer ${fixture.token}`, "Transfer-Encoding": "chunked" },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => (text += chunk.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      for (let offset = 0; offset < bigBody.length; offset += 8192)
        req.write(bigBody.slice(offset, offset + 8192));
      req.end();
    });
    expect(status).toBe(413);
    expect(AgentErrorBody.parse(JSON.parse(body)).error.code).toBe("too_large");
  });

  it("answers unknown paths with 404 and wrong methods with 405", async () => {
    const missing = await call("/v2/health");
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe("not_found");
    const wrongMethod = await call("/v1/checks");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
  });
});

describe("tty", () => {
  let terminal: ChildProcess | undefined;

  afterAll(async () => {
    // SIGKILL: on SIGTERM script lingers for seconds. The pty's sleep then gets SIGHUP.
    if (terminal?.exitCode === null) {
      const exited = new Promise((resolve) => terminal?.once("exit", resolve));
      terminal.kill("SIGKILL");
      await exited;
    }
  });

  /** `script` opens a real pseudo-terminal and prints its path; it stays open while sleep runs. */
  async function openPty(): Promise<string> {
    const script = spawn("script", ["-qfec", "tty; exec sleep 60", "/dev/null"], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    terminal = script;
    let output = "";
    script.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => /\/dev\/pts\/\d+/.test(output), "script to open a pty");
    return /\/dev\/pts\/\d+/.exec(output)?.[0] ?? "";
  }

  it("sets the terminal size with stty", async () => {
    const pty = await openPty();
    const server = await startAgent({ tty: pty });
    const response = await call("/v1/tty", { server, body: { rows: 41, cols: 123 } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ rows: 41, cols: 123 });
    expect(execFileSync("stty", ["-F", pty, "size"], { encoding: "utf8" }).trim()).toBe("41 123");
  });

  it("refuses sizes that are not whole numbers in range", async () => {
    for (const body of [{ rows: 0, cols: 80 }, { rows: 24, cols: 80.5 }, { rows: 24 }, [24, 80]]) {
      const response = await call("/v1/tty", { body });
      expect(response.status).toBe(400);
    }
  });

  it("reports a tty that cannot be set", async () => {
    const response = await call("/v1/tty", { body: { rows: 24, cols: 80 } });
    expect(response.status).toBe(500);
    expect(await errorOf(response)).toMatchObject({
      code: "tty_failed",
      message: expect.stringContaining("/dev/null-tty"),
    });
  });
});
