// Injected request failures and delays. A failure is what clients meet on a real cluster: a 500
// InternalError Status, or the API server's 429 from its inflight limits (plain text and Retry-After,
// written by http.Error in apiserver's tooManyRequests).
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { internalError, sendError } from "../http/status.ts";
import { rejectUpgrade, writeRawResponse } from "../http/upgrade.ts";

export interface RequestFailure {
  status: 500 | 429;
  /** The Retry-After of a 429; the API server sends 1. */
  retryAfterSeconds: number;
}

export interface RequestFaultPlan {
  delayMs: number;
  failure: RequestFailure | undefined;
}

const tooManyRequests = "Too many requests, please try again later.\n";

export class RequestFaults {
  private failures = { remaining: 0, failure: { status: 500, retryAfterSeconds: 1 } as RequestFailure };
  private delaySetting = { ms: 0, remaining: Number.POSITIVE_INFINITY };

  failNext(count: number, failure: RequestFailure): void {
    this.failures = { remaining: count, failure };
  }

  /** Every response waits `ms` first; only the next `count` when given. */
  delay(ms: number, count = Number.POSITIVE_INFINITY): void {
    this.delaySetting = { ms, remaining: count };
  }

  reset(): void {
    this.failures.remaining = 0;
    this.delaySetting = { ms: 0, remaining: Number.POSITIVE_INFINITY };
  }

  /** What happens to the request that just arrived; counts it against the limits. */
  next(): RequestFaultPlan {
    let delayMs = 0;
    if (this.delaySetting.ms > 0 && this.delaySetting.remaining > 0) {
      delayMs = this.delaySetting.ms;
      this.delaySetting.remaining -= 1;
    }
    let failure: RequestFailure | undefined;
    if (this.failures.remaining > 0) {
      failure = this.failures.failure;
      this.failures.remaining -= 1;
    }
    return { delayMs, failure };
  }
}

const injected = "the emulator was asked to fail this request";

export function sendFailure(response: ServerResponse, failure: RequestFailure): void {
  if (failure.status === 500) return sendError(response, internalError(injected));
  response.writeHead(429, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Retry-After": String(failure.retryAfterSeconds),
    "Content-Length": Buffer.byteLength(tooManyRequests),
  });
  response.end(tooManyRequests);
}

export function failUpgrade(socket: Duplex, failure: RequestFailure): void {
  if (failure.status === 500) return rejectUpgrade(socket, internalError(injected));
  writeRawResponse(
    socket,
    429,
    {
      "Content-Type": "text/plain; charset=utf-8",
      "X-Content-Type-Options": "nosniff",
      "Retry-After": String(failure.retryAfterSeconds),
    },
    tooManyRequests,
  );
}
