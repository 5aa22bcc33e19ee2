// Talks to a session's grading agent (docs/agent.md) over whatever connection the transport opens:
// in production KubeVirt's port-forward through the cluster, in tests a TCP socket. Every way this
// can fail ends as AgentUnreachableError with a reason a person can read.
import type { Duplex } from "node:stream";
import { agentLimits, type AgentCheckSpec } from "../../common/agent-protocol.ts";
import {
  AgentCheckResponse,
  AgentErrorBody,
  AgentHealth,
  type AgentCheckResult,
} from "../../common/grading.ts";
import {
  ConnectionLostError,
  MalformedAnswerError,
  requestOverStream,
  ResponseTooLargeError,
} from "./http-over-stream.ts";

/** Opens a fresh connection to port 8099 of the session's VM. Should reject with a plain reason. */
export type ConnectToAgent = (sessionId: string, signal: AbortSignal) => Promise<Duplex>;

/** The agent could not be asked, or did not answer properly: infrastructure, never a grade. */
export class AgentUnreachableError extends Error {
  readonly code = "unreachable";
}

export interface AgentClientOptions {
  connect: ConnectToAgent;
  /** The session's bearer token: agentToken(secret, sessionId). */
  tokenFor: (sessionId: string) => string;
  /** For opening the connection, the cluster's port-forward handshake included. Default 10 s. */
  connectTimeoutMs?: number;
  /** Allowed on top of the checks' own timeouts before the answer counts as lost. Default 15 s. */
  answerSlackMs?: number;
}

export interface AgentClient {
  /** Results in the order of `checks`; more than the agent takes per request go in several requests. */
  runChecks(
    sessionId: string,
    checks: readonly AgentCheckSpec[],
    signal?: AbortSignal,
  ): Promise<AgentCheckResult[]>;
  health(sessionId: string, signal?: AbortSignal): Promise<AgentHealth>;
}

/**
 * JSON escapes a control character as \u00XX: six bytes for one byte of output. Every check may
 * send agentLimits.outputBytes of it, plus room for the rest of the body.
 */
const maxAnswerBytes = agentLimits.checksPerRequest * agentLimits.outputBytes * 6 + 1024 * 1024;

export function createAgentClient(options: AgentClientOptions): AgentClient {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const answerSlackMs = options.answerSlackMs ?? 15_000;

  async function exchange(
    sessionId: string,
    request: { method: "GET" | "POST"; path: string; body?: unknown; answerWithinMs: number },
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const callerSignal = signal ?? new AbortController().signal;
    const stream = await openConnection(sessionId, callerSignal);
    const deadline = AbortSignal.any([callerSignal, AbortSignal.timeout(request.answerWithinMs)]);
    const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    let answer;
    try {
      answer = await requestOverStream(stream, {
        method: request.method,
        path: request.path,
        headers: {
          authorization: `Bearer ${options.tokenFor(sessionId)}`,
          accept: "application/json",
          ...(body ? { "content-type": "application/json" } : {}),
        },
        body,
        maxResponseBytes: maxAnswerBytes,
        signal: deadline,
      });
    } catch (error) {
      if (callerSignal.aborted) throw callerSignal.reason;
      throw explainExchangeFailure(error, request.answerWithinMs);
    }
    const json = parseJson(answer.body);
    if (answer.status !== 200) throw explainRefusal(answer.status, json);
    return json;
  }

  async function openConnection(sessionId: string, callerSignal: AbortSignal): Promise<Duplex> {
    const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(connectTimeoutMs)]);
    try {
      const stream = await options.connect(sessionId, signal);
      // A transport that ignored the signal may still deliver: nobody wants that connection now.
      if (signal.aborted) {
        stream.destroy();
        throw signal.reason;
      }
      return stream;
    } catch (error) {
      if (callerSignal.aborted) throw callerSignal.reason;
      if (signal.aborted) {
        throw new AgentUnreachableError(
          `The VM's grading agent did not accept a connection within ${seconds(connectTimeoutMs)}.`,
        );
      }
      if (error instanceof AgentUnreachableError) throw error;
      throw new AgentUnreachableError(
        `The VM's grading agent cannot be reached (${describeSocketError(error)}).`,
      );
    }
  }

  return {
    async runChecks(sessionId, checks, signal) {
      const results: AgentCheckResult[] = [];
      for (let start = 0; start < checks.length; start += agentLimits.checksPerRequest) {
        const batch = checks.slice(start, start + agentLimits.checksPerRequest);
        // Run one after another the checks could never take longer than this.
        const answerWithinMs =
          batch.reduce((sum, check) => sum + check.timeoutSeconds * 1000, 0) + answerSlackMs;
        const json = await exchange(
          sessionId,
          { method: "POST", path: "/v1/checks", body: { checks: batch }, answerWithinMs },
          signal,
        );
        const parsed = AgentCheckResponse.safeParse(json);
        if (!parsed.success) throw unreadableAnswer();
        results.push(...parsed.data.results);
      }
      return results;
    },

    async health(sessionId, signal) {
      const json = await exchange(
        sessionId,
        { method: "GET", path: "/v1/health", answerWithinMs: answerSlackMs },
        signal,
      );
      const parsed = AgentHealth.safeParse(json);
      if (!parsed.success) throw unreadableAnswer();
      return parsed.data;
    },
  };
}

function explainExchangeFailure(error: unknown, answerWithinMs: number): AgentUnreachableError {
  if (error instanceof ResponseTooLargeError) {
    return new AgentUnreachableError(
      `The grading agent's answer was larger than ${Math.round(error.limitBytes / 1024 / 1024)} MiB.`,
    );
  }
  if (error instanceof MalformedAnswerError) return unreadableAnswer();
  if (error instanceof ConnectionLostError) {
    return new AgentUnreachableError(
      "The connection to the grading agent broke before it answered (the VM or its agent may have stopped).",
    );
  }
  if ((error as Error | undefined)?.name === "TimeoutError") {
    return new AgentUnreachableError(`The grading agent did not answer within ${seconds(answerWithinMs)}.`);
  }
  return new AgentUnreachableError(`Talking to the grading agent failed (${describeSocketError(error)}).`);
}

function explainRefusal(status: number, json: unknown): AgentUnreachableError {
  const parsed = AgentErrorBody.safeParse(json);
  if (!parsed.success) return new AgentUnreachableError(`The grading agent answered with HTTP ${status}.`);
  const { code, message } = parsed.data.error;
  return new AgentUnreachableError(`The grading agent refused (${code}): ${message}`);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

function unreadableAnswer(): AgentUnreachableError {
  return new AgentUnreachableError("The grading agent sent an answer the console cannot read.");
}

const socketErrorWords: Record<string, string> = {
  ECONNREFUSED: "nothing listens on the agent's port",
  ECONNRESET: "the connection was reset",
  EPIPE: "the connection was closed",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the VM's address is unreachable",
  ENETUNREACH: "the VM's network is unreachable",
};

function describeSocketError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && socketErrorWords[code]) return socketErrorWords[code];
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
