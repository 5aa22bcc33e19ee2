// The attacker's side of grading, for tests: a fake agent on 127.0.0.1 that answers every check
// with full marks, as ../shared/reviews/security-repro/fake-agent.mjs did to the v1 protocol, and
// a relay that sits between the console and the real agent and records what passes. Both keep the
// raw bytes they received, to show that nothing in them can be used again.
import { connect as connectTcp, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import type { ConnectToAgent } from "../client.ts";
import { agentAnswerMac } from "../signature.ts";

export interface CapturingServer {
  connect: ConnectToAgent;
  /** Each connection's request as it arrived so far, bytes for bytes (request line, headers and body). */
  requests(): Buffer[];
  close(): Promise<void>;
}

export interface FakeAgentOptions {
  /** Signs each answer as the agent would, with this key (the wrong one: it cannot know the right one). */
  signWith?: string;
}

/** Answers /v1/checks with exit 0 and score 1 for every check, /v1/health with ok. */
export async function startFakeAgent(options: FakeAgentOptions = {}): Promise<CapturingServer> {
  return listen((socket, received) => {
    socket.on("data", () => {
      const request = parseRequest(Buffer.concat(received));
      if (request) socket.end(fakeAnswer(request, options));
    });
  });
}

/** Passes every connection on to `upstream` (the real agent) and records what the console sent. */
export async function startRecordingRelay(
  sessionId: string,
  upstream: ConnectToAgent,
): Promise<CapturingServer> {
  return listen((socket) => {
    socket.pause();
    upstream(sessionId, AbortSignal.timeout(5000)).then(
      (agent) => {
        agent.on("error", () => socket.destroy());
        socket.pipe(agent);
        agent.pipe(socket);
        socket.resume();
      },
      () => socket.destroy(),
    );
  });
}

/** Sends raw request bytes over a fresh connection and returns the answer's status and body. */
export async function sendRaw(
  connect: ConnectToAgent,
  sessionId: string,
  raw: Buffer,
): Promise<{ status: number; headers: string; body: string }> {
  const socket = await connect(sessionId, AbortSignal.timeout(5000));
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", resolve);
    socket.on("close", () => resolve());
    socket.on("error", reject);
    socket.write(raw);
  });
  const text = Buffer.concat(chunks).toString("utf8");
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body };
}

interface ParsedRequest {
  method: string;
  target: string;
  headers: Map<string, string>;
  body: Buffer;
}

function parseRequest(received: Buffer): ParsedRequest | null {
  const end = received.indexOf("\r\n\r\n");
  if (end === -1) return null;
  const [line = "", ...fields] = received.subarray(0, end).toString("latin1").split("\r\n");
  const [method = "", target = ""] = line.split(" ");
  const headers = new Map(
    fields.map((field) => {
      const colon = field.indexOf(":");
      return [field.slice(0, colon).trim().toLowerCase(), field.slice(colon + 1).trim()] as const;
    }),
  );
  const length = Number(headers.get("content-length") ?? 0);
  if (received.length < end + 4 + length) return null;
  return { method, target, headers, body: received.subarray(end + 4, end + 4 + length) };
}

function fakeAnswer(request: ParsedRequest, options: FakeAgentOptions): Buffer {
  let answer: unknown;
  if (request.target.startsWith("/v1/checks")) {
    const { checks } = JSON.parse(request.body.toString("utf8")) as { checks: { id: string }[] };
    answer = {
      results: checks.map((check) => ({
        id: check.id,
        exitCode: 0,
        signal: null,
        timedOut: false,
        output: "ok\n",
        outputTruncated: false,
        durationMs: 5,
        score: 1,
      })),
    };
  } else {
    answer = { status: "ok", version: "2.0.0", runAs: { user: "student", home: "/home/student" } };
  }
  const body = Buffer.from(JSON.stringify(answer));
  const nonce = /nonce=([0-9a-f]+)/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const mac = options.signWith
    ? `Lab-Agent-MAC: ${agentAnswerMac(options.signWith, nonce, 200, body)}\r\n`
    : "";
  return Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${mac}` +
        "Connection: close\r\n\r\n",
    ),
    body,
  ]);
}

/** `onConnection` sees each connection after its bytes are recorded into `received`. */
async function listen(onConnection: (socket: Socket, received: Buffer[]) => void): Promise<CapturingServer> {
  const sockets = new Set<Socket>();
  const connections: Buffer[][] = [];
  const server: Server = createServer((socket) => {
    const received: Buffer[] = [];
    connections.push(received);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    onConnection(socket, received);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    requests: () => connections.map((chunks) => Buffer.concat(chunks)),
    connect: (_sessionId, signal) =>
      new Promise((resolve, reject) => {
        const socket = connectTcp({ host: "127.0.0.1", port, signal });
        socket.once("connect", () => resolve(socket));
        socket.once("error", reject);
      }),
    async close() {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
