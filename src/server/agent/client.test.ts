// The agent client against a real agent over real TCP, against sockets that misbehave the way a
// broken VM or network does, and against a student's fake agent: whatever does not prove itself with
// the session's key is never believed, and nothing the console sends can be used again.
import { existsSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentLimits } from "../../common/agent-protocol.ts";
import { waitFor } from "../../common/testing/patience.ts";
import { createAgentClient, type ConnectToAgent } from "./client.ts";
import { AgentUnreachableError, AgentUnverifiedError, unverifiedReasons } from "./errors.ts";
import { agentAnswerMac } from "./signature.ts";
import { sendRaw, startFakeAgent, startRecordingRelay, type CapturingServer } from "./testing/fake-agent.ts";
import { startLoopbackAgents, type LoopbackAgents } from "./testing/loopback-agents.ts";

let agents: LoopbackAgents;
const session = "linux-basics-client01";
const otherSession = "linux-basics-client02";

beforeAll(async () => {
  agents = await startLoopbackAgents([session, otherSession]);
});
afterAll(() => agents.close());

const client = (overrides: Partial<Parameters<typeof createAgentClient>[0]> = {}) =>
  createAgentClient({ connect: agents.connect, keyFor: agents.keyFor, ...overrides });

const fakes: CapturingServer[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});
async function started(server: Promise<CapturingServer>): Promise<CapturingServer> {
  const fake = await server;
  fakes.push(fake);
  return fake;
}

async function unverifiedReason(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(AgentUnverifiedError);
  return (error as Error).message;
}

/** A raw HTTP answer with a JSON body, signed or not. */
function answer(status: number, body: unknown, headers = ""): string {
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
    `${headers}Connection: close\r\n\r\n${text}`
  );
}

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
  it("asks the agent's health with the session's key, and believes the signed answer", async () => {
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

  it("reports a key the agent does not share as a refused signature, never with the agent's own words", async () => {
    const reason = await unverifiedReason(client({ keyFor: () => "f".repeat(64) }).health(session));
    expect(reason).toBe(unverifiedReasons.signatureRefused);
    expect(reason).toBe(
      "The VM's grading agent did not accept the console's signature (its key differs from this server's; was AGENT_TOKEN_SECRET changed after the VM started?).",
    );
  });

  it("keeps a verified refusal's own words: the agent proved it said them", async () => {
    const reason = await unreachableReason(
      client().runChecks(session, [{ id: "no-time", run: "true", timeoutSeconds: 0 }]),
    );
    expect(reason).toMatch(/^The grading agent refused \(invalid\): /);
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
    await waitFor(() => existsSync(marker), "the marker file");
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

  it("refuses an unsigned answer, whatever it says", async () => {
    const connect = await rawServer((socket) =>
      socket.end("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\nnot json!"),
    );
    expect(await unverifiedReason(client({ connect }).health(session))).toBe(unverifiedReasons.unproven);
  });

  it("says an unsigned no_key is an agent still starting, and nothing else it says", async () => {
    const noKey = { error: { code: "no_key", message: "Send me your key, I will grade you 10/10." } };
    const connect = await rawServer((socket) => socket.end(answer(503, noKey)));
    expect(await unverifiedReason(client({ connect }).health(session))).toBe(
      "The VM's grading agent has no key yet; your VM is still starting its grading agent.",
    );
    // Any other unsigned refusal proves nothing.
    const tooLarge = await rawServer((socket) =>
      socket.end(answer(413, { error: { code: "too_large", message: "no" } })),
    );
    expect(await unverifiedReason(client({ connect: tooLarge }).health(session))).toBe(
      unverifiedReasons.unproven,
    );
  });

  it("refuses a refusal with a wrong signature as unproven, not as a refused signature", async () => {
    const connect = await rawServer((socket) =>
      socket.end(
        answer(
          401,
          { error: { code: "unauthenticated", message: "no" } },
          `Lab-Agent-MAC: ${"0".repeat(64)}\r\n`,
        ),
      ),
    );
    expect(await unverifiedReason(client({ connect }).health(session))).toBe(unverifiedReasons.unproven);
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

describe("a student's fake agent on the port", () => {
  const checks = [
    { id: "hello-file", run: "test -f ~/hello.txt", timeoutSeconds: 5 },
    { id: "notes-dir", run: "test -d ~/notes", timeoutSeconds: 5 },
  ];

  it("is refused when it answers full marks without a signature, as security-repro/fake-agent.mjs did", async () => {
    const fake = await started(startFakeAgent());
    const reason = await unverifiedReason(client({ connect: fake.connect }).runChecks(session, checks));
    expect(reason).toBe(
      "The VM's grading agent could not prove itself: its answer was not signed with this session's key.",
    );
    expect(fake.requests()).toHaveLength(1);
  });

  it("is refused with 'could not prove itself' when it signs with another key", async () => {
    // The best a fake can do without the key: sign with one of its own, here another session's.
    const fake = await started(startFakeAgent({ signWith: agents.keyFor(otherSession) }));
    const reason = await unverifiedReason(client({ connect: fake.connect }).runChecks(session, checks));
    expect(reason).toMatch(/could not prove itself/);
    expect(reason).toBe(unverifiedReasons.unproven);
  });

  it("learns nothing it could use: the key is not in what it received", async () => {
    const fake = await started(startFakeAgent());
    const key = agents.keyFor(session);
    await client({ connect: fake.connect })
      .runChecks(session, checks)
      .catch(() => undefined);
    await client({ connect: fake.connect })
      .health(session)
      .catch(() => undefined);
    const received = fake.requests().map((request) => request.toString("latin1"));
    expect(received).toHaveLength(2);
    for (const request of received) {
      expect(request).toMatch(/^(POST \/v1\/checks|GET \/v1\/health) HTTP\/1\.1\r\n/);
      expect(request).toMatch(/\r\nauthorization: Lab-Agent-HMAC nonce=[0-9a-f]{32}, mac=[0-9a-f]{64}\r\n/i);
      // Neither the key nor anything that contains it (in any case, or base64 as a bearer might be).
      expect(request.toLowerCase()).not.toContain(key);
      expect(request).not.toContain(Buffer.from(key).toString("base64"));
      expect(request).not.toMatch(/bearer/i);
    }
  });

  it("cannot replay what it captured: the real agent refuses a request it has seen, and other sessions' agents any", async () => {
    // A relay on the path sees the console's request on its way to the real agent.
    const relay = await started(startRecordingRelay(session, agents.connect));
    const results = await client({ connect: relay.connect }).runChecks(session, checks);
    expect(results.map((result) => result.id)).toEqual(["hello-file", "notes-dir"]);
    const [captured] = relay.requests();
    if (!captured) throw new Error("the relay saw no request");

    const again = await sendRaw(agents.connect, session, captured);
    expect(again.status).toBe(401);
    expect(JSON.parse(again.body)).toMatchObject({ error: { code: "unauthenticated" } });
    // And what the agent refused, it did not sign: nothing there for the console to believe.
    expect(again.headers.toLowerCase()).not.toContain("lab-agent-mac");

    // Nor does it open another session's VM.
    const elsewhere = await sendRaw(agents.connect, otherSession, captured);
    expect(elsewhere.status).toBe(401);

    // A fake agent's capture is the same kind of request: signed for one nonce, one body, one VM.
    const fake = await started(startFakeAgent());
    await client({ connect: fake.connect })
      .runChecks(session, checks)
      .catch(() => undefined);
    const [stolen] = fake.requests();
    if (!stolen) throw new Error("the fake agent saw no request");
    const changed = Buffer.from(stolen.toString("latin1").replace("test -f", "true ||"), "latin1");
    expect((await sendRaw(agents.connect, session, changed)).status).toBe(401);
    expect((await sendRaw(agents.connect, otherSession, stolen)).status).toBe(401);
  });

  it("cannot pass off an answer the real agent gave to another request", async () => {
    // The fake replays a genuine, signed answer it once saw; its MAC is over that request's nonce.
    const relay = await started(startRecordingRelay(session, agents.connect));
    await client({ connect: relay.connect }).health(session);
    const [captured] = relay.requests();
    if (!captured) throw new Error("the relay saw no request");
    const nonce = /nonce=([0-9a-f]{32})/.exec(captured.toString("latin1"))?.[1] ?? "";
    const body = Buffer.from('{"status":"ok","version":"2.0.0","runAs":{"user":"student","home":"/"}}');
    const old = agentAnswerMac(agents.keyFor(session), nonce, 200, body);
    const connect = await rawServer((socket) =>
      socket.end(
        `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nLab-Agent-MAC: ${old}\r\n\r\n${body.toString()}`,
      ),
    );
    expect(await unverifiedReason(client({ connect }).health(session))).toBe(unverifiedReasons.unproven);
  });
});
