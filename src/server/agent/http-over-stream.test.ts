// One HTTP exchange over a socket, against peers that answer well, too much, or only half.
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConnectionLostError,
  requestOverStream,
  ResponseTooLargeError,
  type StreamRequest,
} from "./http-over-stream.ts";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Connects to a server that reads the request, then treats the socket with `answer`. */
async function socketTo(answer: (socket: Socket, request: string) => void): Promise<Socket> {
  const server = createServer((socket) => {
    let request = "";
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      request += chunk.toString("latin1");
      if (request.includes("\r\n\r\n")) answer(socket, request);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const socket = connect({ host: "127.0.0.1", port: (server.address() as AddressInfo).port });
  await new Promise((resolve) => socket.once("connect", resolve));
  return socket;
}

const get = (overrides: Partial<StreamRequest> = {}): StreamRequest => ({
  method: "GET",
  path: "/v1/health",
  headers: { authorization: "Lab-Agent-HMAC nonce=n, mac=m" },
  maxResponseBytes: 1024,
  signal: new AbortController().signal,
  ...overrides,
});

describe("requestOverStream", () => {
  it("sends one request that closes the connection, and reads the whole answer", async () => {
    let seen = "";
    const socket = await socketTo((peer, request) => {
      seen = request;
      peer.end("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    });
    const answer = await requestOverStream(socket, get());
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("hello");
    expect(seen).toMatch(/^GET \/v1\/health HTTP\/1\.1\r\n/);
    expect(seen.toLowerCase()).toContain("connection: close\r\n");
    expect(seen.toLowerCase()).toContain("authorization: lab-agent-hmac nonce=n, mac=m\r\n");
    expect(socket.destroyed).toBe(true);
  });

  it("stops reading an answer that is too large", async () => {
    const socket = await socketTo((peer) =>
      peer.end(`HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n${"x".repeat(4096)}`),
    );
    await expect(requestOverStream(socket, get({ maxResponseBytes: 100 }))).rejects.toBeInstanceOf(
      ResponseTooLargeError,
    );
  });

  it("reports an answer cut off in the middle as a lost connection", async () => {
    const socket = await socketTo((peer) => {
      peer.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
      setImmediate(() => peer.destroy());
    });
    await expect(requestOverStream(socket, get())).rejects.toBeInstanceOf(ConnectionLostError);
  });

  it("gives up when the caller aborts, with the caller's reason", async () => {
    const stop = new AbortController();
    const socket = await socketTo(() => stop.abort(new Error("enough")));
    await expect(requestOverStream(socket, get({ signal: stop.signal }))).rejects.toThrow("enough");
    expect(socket.destroyed).toBe(true);
  });
});
