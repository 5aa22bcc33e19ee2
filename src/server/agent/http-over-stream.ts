// One HTTP/1.1 exchange over a stream the caller already opened (a TCP socket, or a websocket
// port-forward through the cluster). node:http does the protocol; the stream is used once and closed.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

export interface StreamRequest {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** A longer answer is cut off and fails with ResponseTooLargeError. */
  maxResponseBytes: number;
  signal: AbortSignal;
}

export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class ResponseTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`The answer is larger than ${limitBytes} bytes.`);
  }
}

/** The stream ended before a whole answer came back. */
export class ConnectionLostError extends Error {}

/** What came back is not HTTP. */
export class MalformedAnswerError extends Error {}

export function requestOverStream(stream: Duplex, request: StreamRequest): Promise<StreamResponse> {
  const { signal } = request;
  return new Promise<StreamResponse>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      outcome();
      // One request per connection: whatever the outcome, this stream is finished.
      stream.destroy();
    };
    const fail = (error: unknown) => settle(() => reject(error));
    const onAbort = () => {
      fail(signal.reason);
      req.destroy();
    };

    const req = httpRequest({
      method: request.method,
      path: request.path,
      // node:http accepts any duplex here; its types only name net.Socket.
      createConnection: () => stream as Socket,
      headers: {
        ...request.headers,
        host: "lab-agent",
        connection: "close",
        "content-length": String(request.body?.length ?? 0),
      },
    });
    req.on("error", (error: NodeJS.ErrnoException) =>
      // llhttp's parse errors carry codes starting HPE_; everything else is the connection failing.
      fail(
        error.code?.startsWith("HPE_")
          ? new MalformedAnswerError(error.message)
          : new ConnectionLostError(error.message),
      ),
    );
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > request.maxResponseBytes) {
          fail(new ResponseTooLargeError(request.maxResponseBytes));
          res.destroy();
        } else chunks.push(chunk);
      });
      res.on("end", () =>
        settle(() =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        ),
      );
      res.on("close", () => {
        if (!res.complete) fail(new ConnectionLostError("the connection closed in the middle of the answer"));
      });
      res.on("error", (error) => fail(new ConnectionLostError(error.message)));
    });

    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    req.end(request.body);
  });
}
