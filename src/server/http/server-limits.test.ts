// Timeouts and connection caps (security review L2): a request trickled in, a connection that never
// says anything and an answer nobody reads are cut; one address cannot hold more than its share of
// the server's connections, while a trusted proxy, which carries everyone, is not capped. Real sockets
// from several loopback addresses against a BFF with shortened limits.
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { loadConfig } from "../config.ts";
import { startBffProcess } from "../system-tests/testing/bff-process.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { openSocket, rawRequest, serverClosed } from "../testing/raw-http.ts";
import { patient, eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";

const bigAnswerBytes = 32 * 1024 * 1024;
const quietForMs = 1_500;

let emulator: TestEmulator;
let timed: TestBff;
let capped: TestBff;
let behindProxy: TestBff;
const held: Socket[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  timed = await startTestBff({
    labs: [aLab()],
    emulator,
    serverLimits: {
      requestTimeoutMs: 600,
      headersTimeoutMs: 400,
      keepAliveTimeoutMs: 300,
      idleTimeoutMs: 500,
    },
    routes(app) {
      const open = { config: { access: "public" } } as const;
      app.get("/test/quiet", open, async () => {
        await new Promise((resolve) => setTimeout(resolve, quietForMs));
        return { ok: true };
      });
      app.get("/test/big", open, async (_request, reply) =>
        reply.type("application/octet-stream").send(Buffer.alloc(bigAnswerBytes)),
      );
    },
  });
  capped = await startTestBff({ labs: [aLab()], emulator, serverLimits: { maxConnectionsPerAddress: 4 } });
  behindProxy = await startTestBff({
    labs: [aLab()],
    emulator,
    trustProxy: loadConfig({ env: { TRUST_PROXY: "127.0.0.3" }, inCluster: false }).trustProxy,
    serverLimits: { maxConnectionsPerAddress: 4 },
  });
});

afterEach(() => {
  for (const socket of held.splice(0)) socket.destroy();
});

afterAll(async () => {
  for (const bff of [timed, capped, behindProxy]) await bff?.close();
  await emulator?.close();
});

/** `count` connections from `from` that stay open, saying nothing. */
async function hold(baseUrl: string, from: string, count: number): Promise<Socket[]> {
  const sockets = await Promise.all(Array.from({ length: count }, () => openSocket(baseUrl, from)));
  held.push(...sockets);
  return sockets;
}

/** Sends `chunk` every 100 ms until the socket closes. */
function trickle(socket: Socket, chunk: string): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write(chunk);
  }, 100);
  socket.once("close", () => clearInterval(timer));
}

const healthz = (baseUrl: string, from: string) =>
  rawRequest(baseUrl, { path: "/api/healthz", from }).then((answer) => answer.status);

describe("timeouts", () => {
  it("answers a body trickled in slower than the request timeout with 408, and closes", async () => {
    const socket = await openSocket(timed.url);
    const ended = serverClosed(socket, 3_000);
    socket.write(
      "POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        "X-Lab-Console: 1\r\nContent-Length: 100000\r\n\r\n{",
    );
    trickle(socket, " ");
    const { received, afterMs } = await ended;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(afterMs).toBeLessThan(600 + patient(500));
  });

  it("answers headers that never end with 408 within the headers timeout", async () => {
    const socket = await openSocket(timed.url);
    const ended = serverClosed(socket, 3_000);
    socket.write("GET /api/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    trickle(socket, "X-Slow: 1\r\n");
    const { received, afterMs } = await ended;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(afterMs).toBeLessThan(400 + patient(500));
  });

  it("closes a connection that never sends a request", async () => {
    const { afterMs } = await serverClosed(await openSocket(timed.url), 3_000);
    expect(afterMs).toBeLessThan(400 + patient(500));
  });

  it("closes a kept-alive connection after the keep-alive timeout", async () => {
    const socket = await openSocket(timed.url);
    const ended = serverClosed(socket, 3_000);
    socket.write("GET /api/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const { received, afterMs } = await ended;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    // Node waits a second longer than it advertises (Keep-Alive: timeout=...), against races.
    expect(afterMs).toBeLessThan(300 + 1_000 + patient(500));
  });

  it("waits for an answer that takes longer than the idle timeout to come", async () => {
    const answer = await rawRequest(timed.url, { path: "/test/quiet" });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
  });

  it("cuts an answer the client stopped reading, after the idle timeout", async () => {
    const socket = await openSocket(timed.url);
    let received = 0;
    socket.on("data", (chunk: Buffer) => (received += chunk.length));
    socket.pause();
    socket.write("GET /test/big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    // Long enough for the server to give up on it; then what it had sent can be read to the end.
    await new Promise((resolve) => setTimeout(resolve, 500 + 1_000));
    const ended = serverClosed(socket, 5_000);
    socket.resume();
    await ended;
    expect(received).toBeLessThan(bigAnswerBytes);
  });
});

describe("connections per address", () => {
  it("refuses connection N+1 from one address without a word, while another address is served", async () => {
    const [first] = await hold(capped.url, "127.0.0.2", 4);
    const refused = await serverClosed(await openSocket(capped.url, "127.0.0.2"), 2_000);
    expect(refused.received).toBe("");
    expect(await healthz(capped.url, "127.0.0.3")).toBe(200);
    // A connection that ends makes room again.
    first?.destroy();
    await eventually(
      () => healthz(capped.url, "127.0.0.2").catch(() => 0),
      (status) => status === 200,
      { what: "room for another connection from 127.0.0.2", timeoutMs: 3_000 },
    );
  });

  it("does not cap a trusted proxy, which carries everyone's connections", async () => {
    await hold(behindProxy.url, "127.0.0.3", 6);
    expect(await healthz(behindProxy.url, "127.0.0.3")).toBe(200);
    await hold(behindProxy.url, "127.0.0.2", 4);
    expect((await serverClosed(await openSocket(behindProxy.url, "127.0.0.2"), 2_000)).received).toBe("");
  });

  it("counts a console's socket, and has room for a console and a browser's connections", async () => {
    const from = "127.0.0.7";
    const bff = await startTestBff({
      labs: [aLab()],
      emulator,
      serverLimits: { maxConnectionsPerAddress: 8 },
    });
    try {
      const alice = await bff.signIn("alice");
      const sessionId = await launchRunning(alice, aLab().id);
      const cookie = await signInCookie(bff, "alice");
      const url = new URL(`/api/sessions/${sessionId}/console`, bff.url.replace(/^http/, "ws"));
      const consoleSocket = new WebSocket(url, { headers: { cookie, origin: bff.url }, localAddress: from });
      await new Promise((resolve, reject) => {
        consoleSocket.once("open", resolve);
        consoleSocket.once("error", reject);
      });
      // A browser opens up to six connections to one host, shared by its tabs; one more for good measure.
      const browser = new Agent({ keepAlive: true, maxSockets: 7, localAddress: from });
      try {
        const statuses = await Promise.all(
          Array.from({ length: 21 }, () => getWith(browser, bff, "/api/me", cookie)),
        );
        expect(statuses).toEqual(Array(21).fill(200));
        expect(consoleSocket.readyState).toBe(WebSocket.OPEN);
        // The console and seven kept-alive connections fill the eight: the next is refused.
        expect((await serverClosed(await openSocket(bff.url, from), 2_000)).received).toBe("");
        consoleSocket.close();
        browser.destroy();
        await eventually(
          () => healthz(bff.url, from).catch(() => 0),
          (status) => status === 200,
          { what: "room again once the console closed", timeoutMs: 3_000 },
        );
      } finally {
        browser.destroy();
        consoleSocket.terminate();
      }
    } finally {
      await bff.close();
    }
  });
});

async function signInCookie(bff: TestBff, username: string): Promise<string> {
  const answer = await rawRequest(bff.url, {
    method: "POST",
    path: "/api/auth/login",
    headers: { "x-lab-console": "1" },
    body: { username, password: "demo" },
  });
  return String(answer.headers["set-cookie"]).split(";")[0] ?? "";
}

function getWith(agent: Agent, bff: TestBff, path: string, cookie: string): Promise<number> {
  const url = new URL(bff.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: url.hostname, port: url.port, path, agent, headers: { cookie } },
      (answer) => {
        answer.resume();
        answer.on("end", () => resolve(answer.statusCode ?? 0));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("as npm start reads them from the environment", () => {
  it("applies TRUST_PROXY, the cap per address and the timeouts", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "server-limits-"));
    const bff = await startBffProcess({
      env: {
        LAB_KUBECONFIG: emulator.bffKubeconfigPath(),
        AUTH_MODE: "demo",
        HOST: "127.0.0.1",
        PORT: "0",
        DATA_DIR: dir,
        LABS_DIR: dir,
        LAB_NAMESPACE: testNamespace,
        TRUST_PROXY: "127.0.0.3",
        LAB_MAX_CONNECTIONS_PER_ADDRESS: "2",
        LAB_HEADERS_TIMEOUT_SECONDS: "0.5",
      },
    });
    try {
      await hold(bff.url, "127.0.0.2", 2);
      expect((await serverClosed(await openSocket(bff.url, "127.0.0.2"), 2_000)).received).toBe("");
      await hold(bff.url, "127.0.0.3", 3);
      expect(await healthz(bff.url, "127.0.0.3")).toBe(200);
      const silent = await serverClosed(await openSocket(bff.url, "127.0.0.4"), 3_000);
      expect(silent.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(silent.afterMs).toBeLessThan(500 + patient(1_000));
    } finally {
      for (const socket of held.splice(0)) socket.destroy();
      await bff.kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
