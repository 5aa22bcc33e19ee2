// JSON in and out of node:http, with the body cap and the one error shape.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AgentErrorBody, AgentErrorCode } from "../common/agent-protocol.ts";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: AgentErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  const body: AgentErrorBody = { error: { code: error.code, message: error.message } };
  sendJson(res, error.status, body, error.headers);
}

/** Reads and parses the body; refuses more than maxBytes without buffering the rest. */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const tooLarge = () =>
    new HttpError(413, "too_large", `The request body is larger than ${maxBytes} bytes.`, {
      // The rest of the body is not read, so this connection cannot carry another request.
      Connection: "close",
    });
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) return Promise.reject(tooLarge());

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off("data", onData).off("end", onEnd);
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve(text === "" ? undefined : JSON.parse(text));
      } catch {
        reject(new HttpError(400, "invalid", "The request body is not valid JSON."));
      }
    };
    req.on("data", onData).on("end", onEnd).on("error", reject);
  });
}
