// The agent client against a real agent over real TCP, and against sockets that misbehave the way
// a broken VM or network does.
import { existsSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentLimits } from "../../common/agent-protocol.ts";
import { AgentUnreachableError, createAgentClient, type ConnectToAgent } from "./agent-client.ts";
import { startLoopbackAgents, type LoopbackAgents } from "./testing/loopback-agents.ts";

let agents: LoopbackAgents;
const session = "linux-basics-client01";

beforeAll(async () => {
  agents = await startLoopbackAgents([session]);
});
afterAll(() => agents.close());

const client = (overrides: Partial<Parameters<typeof createAgentClient>[0]> = {}) =>
  createAgentClient({ connect: agents.connect, tokenFor: agents.tokenFor, ...overrides });

async function unreachableReason(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(AgentUnreachableError);
  return (error as Error).message;
}

/** A TCP server that treats each connection with `answer`: a peer that is not a proper agent. */
const rawServers: { server: Server; sockets: Set<Socket> }[] = [];
afterEach(async () => {
  for (const { server, sockets } of rawServers.splice(0)) {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  }
});
async function rawServer(answer: (socket: Socket) => void): Promise<ConnectToAgent> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    answer(socket);
  });
  rawServers.push({ server, sockets });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port });
      socket.once("connect", () => resolve(socket));
      socket.once("error", reject);
    });
}

describe("the agent client", () => {
  it("asks the agent's health with the session's token", async () => {
    const health = await client().health(session);
    expect(health.status).toBe("ok");
    expect(health.runAs.home).toBe(agents.home(session));
  });

  it("runs checks and returns the results in the order asked", async () => {
    const results = await client().runChecks(session, [
      { id: "fails", run: "echo nope; exit 3", timeoutSeconds: 5 },
      { id: "passes", run: "echo yes", timeoutSeconds: 5 },
      { id: "partial", run: "echo score=0.25", timeoutSeconds: 5 },
    ]);
    expect(results.map((result) => [result.id, result.exitCode, result.output, result.score])).toEqual([
      ["fails", 3, "nope\n", null],
      ["passes", 0, "yes\n", null],
      ["partial", 0, "score=0.25\n", 0.25],
    ]);
  });

  it("splits more checks than the agent takes at once over several requests", async () => {
    const count = agentLimits.checksPerRequest + 2;
    const checks = Array.from({ length: count }, (_, index) => ({
      id: `c${index}`,
      run: `exit ${index % 2}`,
      timeoutSeconds: 5,
    }));
    const results = await client().runChecks(session, checks);
    expect(results.map((result) => result.id)).toEqual(checks.map((check) => check.id));
    expect(results.at(-1)?.exitCode).toBe((count - 1) % 2);
  });

  it("reports a wrong token as the agent's refusal", async () => {
    const reason = await unreachableReason(client({ tokenFor: () => "f".repeat(64) }).health(session));
    expect(reason).toBe(
      "The grading agent refused (unauthenticated): This agent needs its session's bearer token.",
    );
  });

  it("reports a VM without a listening agent in plain words", async () => {
    await agents.stop(session);
    try {
      const reason = await unreachableReason(client().health(session));
      expect(reason).toBe("The VM's grading agent cannot be reached (nothing listens on the agent's port).");
    } finally {
      await agents.start(session);
    }
  });

  it("reports a session the transport cannot find", async () => {
    const reason = await unreachableReason(client().health("linux-basics-nosuchvm"));
    expect(reason).toContain("there is no VM for linux-basics-nosuchvm");
  });

  it("reports an agent that dies in the middle of a check as a broken connection", async () => {
    const marker = `${agents.home(session)}/started-${Date.now()}`;
    const checks = client().runChecks(session, [
      { id: "slow", run: `touch ${marker}; sleep 20`, timeoutSeconds: 30 },
    ]);
    const reason = unreachableReason(checks);
    await eventually(() => existsSync(marker));
    await agents.stop(session);
    await agents.start(session);
    expect(await reason).toBe(
      "The connection to the grading agent broke before it answered (the VM or its agent may have stopped).",
    );
  });

  it("gives up on an agent that never answers", async () => {
    const connect = await rawServer(() => {});
    const reason = await unreachableReason(
      client({ connect, answerSlackMs: 100 }).runChecks(session, [
        { id: "x", run: "true", timeoutSeconds: 0.1 },
      ]),
    );
    expect(reason).toBe("The grading agent did not answer within 0.2 s.");
  });

  it("gives up on a connection that never opens", async () => {
    const never: ConnectToAgent = (_id, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    const reason = await unreachableReason(client({ connect: never, connectTimeoutMs: 50 }).health(session));
    expect(reason).toBe("The VM's grading agent did not accept a connection within 0.1 s.");
  });

  it("refuses an answer that is not the agent's protocol", async () => {
    const connect = await rawServer((socket) =>
      socket.end("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\nnot json!"),
    );
    const reason = await unreachableReason(client({ connect }).health(session));
    expect(reason).toBe("The grading agent sent an answer the console cannot read.");
  });

  it("refuses an answer that is not HTTP at all", async () => {
    const connect = await rawServer((socket) => socket.end("SSH-2.0-OpenSSH_9.6\r\n"));
    const reason = await unreachableReason(client({ connect }).health(session));
    expect(reason).toBe("The grading agent sent an answer the console cannot read.");
  });

  it("passes the caller's abort through instead of calling the agent unreachable", async () => {
    const stop = new AbortController();
    const checks = client().runChecks(
      session,
      [{ id: "slow", run: "sleep 20", timeoutSeconds: 30 }],
      stop.signal,
    );
    stop.abort(new Error("shutting down"));
    await expect(checks).rejects.toThrow("shutting down");
  });
});

async function eventually(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
