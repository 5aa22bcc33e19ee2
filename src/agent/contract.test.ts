// The wire contract of the grading agent (docs/agent.md), run against the agent that ships:
// src/agent/lab_agent/ as a real process on 127.0.0.1, running real shell commands.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLimits, type AgentCheckSpec } from "../common/agent-protocol.ts";
import { patient, waitFor } from "../common/testing/patience.ts";
import { AgentCheckResponse, AgentErrorBody, AgentHealth, type AgentCheckResult } from "../common/grading.ts";
import { agentMacHeader, signAgentRequest } from "../server/agent/signature.ts";
import { createAgentFixture, isProcessAlive, readPid, type AgentFixture } from "./testing/agent-fixture.ts";
import {
  agentScript,
  callAgent,
  runAgent,
  startAgent,
  type AgentProcess,
  type AgentSettings,
} from "./testing/python-agent.ts";

let fixture: AgentFixture;
let agent: AgentProcess;
const started: AgentProcess[] = [];

async function start(overrides: Partial<AgentSettings> = {}): Promise<AgentProcess> {
  const process = await startAgent({
    keyFile: fixture.keyFile,
    user: fixture.user,
    home: fixture.home,
    ...overrides,
  });
  started.push(process);
  return process;
}

function call(path: string, init: Parameters<typeof callAgent>[3] & { to?: AgentProcess } = {}) {
  return callAgent((init.to ?? agent).port, fixture.key, path, init);
}

function errorOf(answer: { json(): unknown }) {
  return AgentErrorBody.parse(answer.json()).error;
}

async function runChecks(...checks: AgentCheckSpec[]): Promise<AgentCheckResult[]> {
  const answer = await call("/v1/checks", { body: { checks } });
  expect(answer.status).toBe(200);
  expect(answer.verified).toBe(true);
  return AgentCheckResponse.parse(answer.json()).results;
}

async function runOne(run: string, timeoutSeconds = 10): Promise<AgentCheckResult> {
  const [result] = await runChecks({ id: "only", run, timeoutSeconds });
  if (!result) throw new Error("no result");
  return result;
}

function residentMegabytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) / 1024;
}

beforeAll(async () => {
  fixture = await createAgentFixture();
  agent = await start();
});

afterAll(async () => {
  await Promise.all(started.map((process) => process.stop()));
  await fixture.remove();
});

describe("the program", () => {
  it("is Python 3.9 that needs nothing beyond the standard library and its own modules", () => {
    const verdict = execFileSync(
      "python3",
      [
        "-c",
        [
          "import ast, glob, os, sys",
          "files = glob.glob(os.path.join(sys.argv[1], '*.py'))",
          "own = {os.path.basename(f)[:-3] for f in files}",
          "names = set()",
          "for f in files:",
          "    tree = ast.parse(open(f).read(), feature_version=(3, 9))",
          "    names |= {a.name.split('.')[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}",
          "    names |= {n.module.split('.')[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}",
          // Its modules come first on sys.path: one named as a standard one would stand in for it.
          "print(sorted(names - set(sys.stdlib_module_names) - own), sorted(own & set(sys.stdlib_module_names)))",
        ].join("\n"),
        agentScript,
      ],
      { encoding: "utf8" },
    );
    expect(verdict.trim()).toBe("[] []");
  });

  it("prints its usage for --help and exits with 2 listing every bad setting", async () => {
    const help = execFileSync("python3", ["-I", agentScript, "--help"], { encoding: "utf8" });
    expect(help).toContain("--key-file");
    const bad = runAgent(["--port", "seventy", "--bogus", "--host="]);
    let stderr = "";
    bad.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => bad.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('port must be a whole number from 0 to 65535, not "seventy"');
    expect(stderr).toContain('Unknown argument "--bogus"');
    expect(stderr).toContain("host must not be empty");
  });

  it("tells systemd it is ready once it listens (Type=notify)", async () => {
    const socketPath = join(fixture.dir, "notify");
    // Node cannot receive on a unix datagram socket; python3 can.
    const receiver = spawn("python3", [
      "-c",
      "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); print('bound', flush=True); print(s.recv(100).decode(), flush=True)",
      socketPath,
    ]);
    let received = "";
    receiver.stdout.on("data", (chunk: Buffer) => (received += chunk.toString()));
    await waitFor(() => received.includes("bound"), "the notify socket");
    const notifying = await startAgent(
      { keyFile: fixture.keyFile, user: fixture.user, home: fixture.home },
      { NOTIFY_SOCKET: socketPath },
    );
    started.push(notifying);
    await waitFor(() => received.includes("READY=1"), "READY=1");
    // Nothing it runs learns the socket.
    const [env] = AgentCheckResponse.parse(
      (
        await callAgent(notifying.port, fixture.key, "/v1/checks", {
          body: { checks: [{ id: "env", run: "printenv NOTIFY_SOCKET || echo unset", timeoutSeconds: 5 }] },
        })
      ).json(),
    ).results;
    expect(env?.output).toBe("unset\n");
  });

  it("stops on SIGTERM with status 0, killing running checks", async () => {
    const stopping = await start();
    const pidFile = join(fixture.home, "sigterm.pid");
    void callAgent(stopping.port, fixture.key, "/v1/checks", {
      body: { checks: [{ id: "slow", run: `echo $$ > ${pidFile}; exec sleep 100`, timeoutSeconds: 60 }] },
    }).catch(() => undefined);
    await waitFor(() => readPid(pidFile) !== null, "the check to start");
    const exited = new Promise((resolve) => stopping.child.once("exit", resolve));
    stopping.child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await waitFor(() => !isProcessAlive(readPid(pidFile) ?? 0), "the check to end");
  });
});

describe("authentication", () => {
  it("refuses an unsigned request before it looks for a key, and reveals no routes", async () => {
    const keyless = await start({ keyFile: join(fixture.dir, "not-written-yet") });
    for (const path of ["/v1/health", "/v1/nothing-here"]) {
      const answer = await call(path, { to: keyless, authorization: null });
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe("Lab-Agent-HMAC");
      expect(answer.headers.get(agentMacHeader)).toBeNull();
      expect(errorOf(answer).code).toBe("unauthenticated");
    }
  });

  it("never takes the key itself as a credential", async () => {
    const answer = await call("/v1/health", { authorization: `Bearer ${fixture.key}` });
    expect(answer.status).toBe(401);
  });

  it("refuses a request signed with another key and runs nothing", async () => {
    const marker = join(fixture.home, "wrong-key-ran");
    const body = Buffer.from(
      JSON.stringify({ checks: [{ id: "a", run: `touch ${marker}`, timeoutSeconds: 5 }] }),
    );
    const forged = signAgentRequest("f".repeat(64), "POST", "/v1/checks", body);
    const answer = await call("/v1/checks", { body: body.toString(), authorization: forged.authorization });
    expect(answer.status).toBe(401);
    expect(answer.verified).toBe(false);
    expect(() => execFileSync("test", ["-e", marker])).toThrow();
  });

  it("refuses a signature over another body or path", async () => {
    const signedForHealth = signAgentRequest(fixture.key, "GET", "/v1/health", Buffer.alloc(0));
    const answer = await call("/v1/checks", {
      body: { checks: [{ id: "a", run: "true", timeoutSeconds: 1 }] },
      authorization: signedForHealth.authorization,
    });
    expect(answer.status).toBe(401);
  });

  it("refuses a request it has seen before", async () => {
    const replayed = signAgentRequest(fixture.key, "GET", "/v1/health", Buffer.alloc(0));
    expect((await call("/v1/health", { authorization: replayed.authorization })).status).toBe(200);
    const again = await call("/v1/health", { authorization: replayed.authorization });
    expect(again.status).toBe(401);
    expect(errorOf(again).message).toContain("seen before");
  });

  it("signs every answer to a signed request, errors included", async () => {
    const health = await call("/v1/health");
    expect(health.status).toBe(200);
    expect(health.verified).toBe(true);
    expect(AgentHealth.parse(health.json())).toEqual({
      status: "ok",
      version: "2.3.0",
      runAs: { user: fixture.expectedUser, home: fixture.home },
    });
    const missing = await call("/v2/health");
    expect(missing.status).toBe(404);
    expect(missing.verified).toBe(true);
  });

  it("as root, takes only a key file that is root's and private", async () => {
    const shared = join(fixture.dir, "shared-key");
    writeFileSync(shared, `${fixture.key}\n`, { mode: 0o644 });
    const guarded = await start({ keyFile: shared });
    const answer = await call("/v1/health", { to: guarded });
    // Not root, the agent has no root to compare with and takes its own user's file.
    expect(answer.status).toBe(process.getuid?.() === 0 ? 503 : 200);
  });

  it("answers no_key while there is no key file", async () => {
    const keyless = await start({ keyFile: join(fixture.dir, "still-not-written") });
    const answer = await call("/v1/health", { to: keyless });
    expect(answer.status).toBe(503);
    expect(errorOf(answer).code).toBe("no_key");
  });

  it("does not follow a key file that is a link, and reads no more than a key's worth", async () => {
    const linked = join(fixture.dir, "linked-key");
    symlinkSync("/dev/zero", linked);
    const oversized = join(fixture.dir, "oversized-key");
    writeFileSync(oversized, "a".repeat(1024 * 1024));
    for (const keyFile of [linked, oversized]) {
      const guarded = await start({ keyFile });
      const answers = await Promise.all([1, 2, 3].map(() => call("/v1/health", { to: guarded })));
      for (const answer of answers) expect(errorOf(answer).code).toBe("no_key");
      expect(residentMegabytes(guarded.pid)).toBeLessThan(64);
    }
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

  it("runs no file the student controls before the check (no login shell, no rc files)", async () => {
    const cheat = "[ -t 0 ] || { echo score=1; exit 0; }\n";
    for (const file of [".bash_profile", ".bash_login", ".profile", ".bashrc", ".bash_env"]) {
      writeFileSync(join(fixture.home, file), cheat);
    }
    const [honest, shellState] = await runChecks(
      { id: "honest", run: "test -e ~/work-that-was-never-done", timeoutSeconds: 10 },
      {
        id: "state",
        run: 'shopt -q login_shell && echo login; echo "BASH_ENV=${BASH_ENV-unset} ENV=${ENV-unset} PATH=$PATH"',
        timeoutSeconds: 10,
      },
    );
    expect(honest).toMatchObject({ exitCode: 1, score: null });
    expect(shellState?.output).toBe(
      "BASH_ENV=unset ENV=unset PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
    );
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

  it("keeps the timeout of a check that closed its output", async () => {
    const result = await runOne("exec >&- 2>&-; sleep 30", 0.5);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" });
    expect(result.durationMs).toBeLessThan(patient(5000));
  });

  it("names a signal that has no name", async () => {
    expect(await runOne("kill -37 $$")).toMatchObject({ exitCode: null, signal: "SIG37" });
  });

  it("kills what a finished check left running in the background", async () => {
    const pidFile = join(fixture.home, "leftover.pid");
    const result = await runOne(`sleep 100 & echo $! > ${pidFile}; echo started`);
    expect(result).toMatchObject({ exitCode: 0, output: "started\n" });
    const pid = readPid(pidFile);
    expect(pid).not.toBeNull();
    await waitFor(() => !isProcessAlive(pid ?? 0), "the leftover sleep to end");
  });

  it("cuts off the output of a process that left the check's group, a moment after the check", async () => {
    const result = await runOne("setsid sleep 30 & echo done");
    expect(result).toMatchObject({ exitCode: 0, output: "done\n" });
    expect(result.durationMs).toBeLessThan(patient(5000));
  });

  it("keeps the tail of an output above the cap", async () => {
    const result = await runOne("seq 1 40000");
    expect(result.outputTruncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBe(agentLimits.outputBytes);
    expect(result.output.endsWith("\n39999\n40000\n")).toBe(true);
  });

  it("runs at most four checks at a time, and every check in the end", async () => {
    const run = "date +%s.%N; sleep 0.3; date +%s.%N";
    const results = await runChecks(
      ...Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, run, timeoutSeconds: 10 })),
    );
    const spans = results.map((r) => r.output.trim().split("\n").map(Number) as [number, number]);
    const mostAtOnce = Math.max(
      ...spans.map(([at]) => spans.filter(([from, to]) => from <= at && at < to).length),
    );
    expect(results.map((r) => r.exitCode)).toEqual(Array(8).fill(0));
    expect(mostAtOnce).toBe(agentLimits.concurrentChecks);
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
    const answer = await call("/v1/checks", {
      body: {
        checks: [
          { id: "a", run: " ", timeoutSeconds: 0 },
          { id: "a", run: "true", timeoutSeconds: 1 },
        ],
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.verified).toBe(true);
    expect(errorOf(answer)).toEqual({
      code: "invalid",
      message:
        "checks[0].run must be a command of 1 to 16384 characters. " +
        "checks[0].timeoutSeconds must be a number above 0 and at most 3600. " +
        'checks[1].id "a" appears twice.',
    });
    const notJson = await call("/v1/checks", { body: "{checks:" });
    expect(errorOf(notJson)).toEqual({ code: "invalid", message: "The request body is not valid JSON." });
  });

  it("reports a missing home as unavailable instead of failing the checks", async () => {
    const homeless = await start({ home: join(fixture.dir, "no-such-home") });
    const answer = await call("/v1/checks", {
      to: homeless,
      body: { checks: [{ id: "a", run: "true", timeoutSeconds: 1 }] },
    });
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatchObject({ code: "run_as_unavailable" });
  });
});

describe("limits and routing", () => {
  const bigBody = JSON.stringify({
    checks: [{ id: "a", run: "x".repeat(agentLimits.bodyBytes), timeoutSeconds: 1 }],
  });

  it("refuses a body over the cap by its Content-Length", async () => {
    const answer = await call("/v1/checks", { body: bigBody });
    expect(answer.status).toBe(413);
    expect(errorOf(answer).code).toBe("too_large");
  });

  it("takes no chunked body", async () => {
    const signed = signAgentRequest(fixture.key, "POST", "/v1/checks", Buffer.from(bigBody));
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: agent.port,
          path: "/v1/checks",
          method: "POST",
          headers: { Authorization: signed.authorization, "Transfer-Encoding": "chunked" },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(bigBody);
    });
    expect(status).toBe(411);
  });

  it("answers unknown paths with 404 and wrong methods with 405", async () => {
    const missing = await call("/v2/health");
    expect(errorOf(missing).code).toBe("not_found");
    const wrongMethod = await call("/v1/checks");
    expect(wrongMethod.status).toBe(405);
    expect(errorOf(wrongMethod).code).toBe("method_not_allowed");
  });

  it("stops reading headers past 16 KiB", async () => {
    const signed = signAgentRequest(fixture.key, "GET", "/v1/health", Buffer.alloc(0));
    const padding = Array.from({ length: 40 }, (_, i) => `X-Padding-${i}: ${"p".repeat(1000)}\r\n`).join("");
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(agent.port, "127.0.0.1");
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", () => undefined);
      socket.write(
        `GET /v1/health HTTP/1.1\r\nHost: agent\r\n${padding}Authorization: ${signed.authorization}\r\n\r\n`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  });

  it("gives a request 10 s in all, however slowly it trickles in, and answers 408 to a body that never ends", async () => {
    const started = Date.now();
    const idle = connect(agent.port, "127.0.0.1");
    const drip = setInterval(() => idle.write("G"), 1000);
    idle.on("error", () => undefined);
    const silentBody = connect(agent.port, "127.0.0.1");
    const signed = signAgentRequest(fixture.key, "POST", "/v1/checks", Buffer.from("{}"));
    silentBody.write(
      `POST /v1/checks HTTP/1.1\r\nHost: agent\r\nAuthorization: ${signed.authorization}\r\nContent-Length: 2\r\n\r\n{`,
    );
    let answer = "";
    silentBody.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    await Promise.all(
      [idle, silentBody].map((socket) => new Promise((resolve) => socket.once("close", resolve))),
    );
    clearInterval(drip);
    expect(Date.now() - started).toBeLessThan(patient(15_000));
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).not.toMatch(/lab-agent-mac/i);
  }, 20_000);
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

  it("sets the terminal size", async () => {
    const pty = await openPty();
    const sizer = await start({ tty: pty });
    const answer = await call("/v1/tty", { to: sizer, body: { rows: 41, cols: 123 } });
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({ rows: 41, cols: 123 });
    expect(execFileSync("stty", ["-F", pty, "size"], { encoding: "utf8" }).trim()).toBe("41 123");
  });

  it("refuses sizes that are not whole numbers in range", async () => {
    for (const body of [{ rows: 0, cols: 80 }, { rows: 24, cols: 80.5 }, { rows: 24 }, [24, 80]]) {
      const answer = await call("/v1/tty", { body });
      expect(answer.status).toBe(400);
    }
  });

  it("reports a tty that cannot be set", async () => {
    const answer = await call("/v1/tty", { body: { rows: 24, cols: 80 } });
    expect(answer.status).toBe(500);
    expect(errorOf(answer)).toMatchObject({
      code: "tty_failed",
      message: expect.stringContaining("/dev/null-tty"),
    });
  });
});
