// HTTP the way tests need it and fetch does not allow: from a chosen source address (Linux routes all
// of 127.0.0.0/8 to loopback, so 127.0.0.2 is another client than 127.0.0.1), with a chosen Host, one
// connection per request. And plain sockets for what is not a whole request at all.
import { patient } from "../../common/testing/patience.ts";
import { request, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON when not a string. */
  body?: unknown;
  /** The client's own address, e.g. 127.0.0.2. */
  from?: string;
}

export function rawRequest(baseUrl: string, options: RawRequest): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const body =
    options.body === undefined
      ? ""
      : typeof options.body === "string"
        ? options.body
        : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? "GET",
        path: options.path,
        localAddress: options.from,
        agent: false,
        headers: {
          ...(options.body !== undefined && typeof options.body !== "string"
            ? { "content-type": "application/json" }
            : {}),
          ...options.headers,
          "content-length": String(Buffer.byteLength(body)),
        },
      },
      (answer) => {
        let text = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => (text += chunk));
        answer.on("end", () =>
          resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: text }),
        );
        answer.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** A TCP connection to the BFF from `from`, once connected. */
export function openSocket(baseUrl: string, from?: string): Promise<Socket> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

export interface SocketEnd {
  /** Everything the server sent before closing. */
  received: string;
  /** Milliseconds from the call until the server closed the connection. */
  afterMs: number;
}

/**
 * What the server sent until it closed `socket`; rejects when it is still open after `withinMs`
 * (the socket is then destroyed).
 */
export function serverClosed(socket: Socket, withinMs: number): Promise<SocketEnd> {
  const started = performance.now();
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`still open after ${withinMs} ms; received ${JSON.stringify(received.slice(0, 200))}`),
      );
    }, patient(withinMs));
    const done = () => {
      clearTimeout(timer);
      resolve({ received, afterMs: performance.now() - started });
    };
    if (socket.destroyed) return done();
    socket.once("close", done);
    // A reset counts as closed too.
    socket.on("error", () => {});
  });
}
