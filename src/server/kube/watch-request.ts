// A Kubernetes watch (GET ...?watch=true, one JSON event per line) that an AbortSignal ends at any
// moment, before the answer's headers as well as while events flow. client-node 1.4.0's Watch only
// hands out its AbortController once the headers have arrived, so an API server that accepted the
// request and stayed silent kept a stopping BFF waiting on it.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { createInterface } from "node:readline";
import type { KubeConfig } from "@kubernetes/client-node";
import { applyToRequestOptions } from "./kept-alive.ts";

/** The API server refused the watch; `body` is its answer (a Status, usually). */
export class WatchRefusedError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(`the watch was refused with HTTP ${statusCode}`);
  }
}

export interface WatchListener {
  /** One event line, parsed; lines that are not JSON are skipped. */
  event(value: unknown): void;
  /**
   * Called once: null when the server ended the stream or the signal aborted the request; the
   * failure otherwise (WatchRefusedError, a connection error, or a stream that broke off).
   */
  closed(error: unknown): void;
}

// As client-node's Watch does: a dead peer on a quiet watch is noticed by TCP keep-alive.
const keepAliveMs = 30_000;
const maxRefusalBytes = 64 * 1024;

/**
 * Starts the watch. Resolves with the HTTP status once the answer's headers are in, or with
 * undefined when no answer came (the request failed or was aborted); the listener hears the rest.
 */
export async function openWatch(
  kubeConfig: KubeConfig,
  url: URL,
  signal: AbortSignal,
  listener: WatchListener,
): Promise<number | undefined> {
  const options: RequestOptions = { method: "GET", headers: { accept: "application/json" } };
  // Credentials, CA and the agent (http.Agent for a plain-HTTP test server, https.Agent otherwise).
  await applyToRequestOptions(kubeConfig, options);
  if (signal.aborted) {
    listener.closed(null);
    return undefined;
  }
  const send = url.protocol === "http:" ? httpRequest : httpsRequest;
  return new Promise((resolve) => {
    let finished = false;
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      signal.removeEventListener("abort", abort);
      request.destroy();
      listener.closed(signal.aborted ? null : error);
      resolve(undefined);
    };
    const abort = () => finish(null);
    const request = send(url, options, (response) => {
      const status = response.statusCode ?? 0;
      resolve(status);
      if (status === 200) follow(response);
      else void readRefusal(response).then((body) => finish(new WatchRefusedError(status, body)), finish);
    });
    const follow = (response: IncomingMessage) => {
      const lines = createInterface({ input: response, crlfDelay: Infinity });
      lines.on("line", (line) => {
        if (finished) return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          return;
        }
        listener.event(value);
      });
      // readline passes the response's errors on; each also ends in "close", which reports it.
      lines.on("error", () => undefined);
      // "close" comes after the last line; an answer cut short is a failure, an ended one is not.
      response.on("close", () => finish(response.complete ? null : new Error("the watch stream broke off")));
    };
    request.on("socket", (socket) => socket.setKeepAlive(true, keepAliveMs));
    request.on("error", finish);
    signal.addEventListener("abort", abort, { once: true });
    request.end();
  });
}

async function readRefusal(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    const bytes = chunk as Buffer;
    if (size + bytes.length > maxRefusalBytes) break;
    size += bytes.length;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}
