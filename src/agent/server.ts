// The agent's HTTP server: authenticate every request, then route it to health, checks or tty.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  agentLimits,
  type AgentCheckResponse,
  type AgentHealth,
  type AgentTtySize,
} from "../common/agent-protocol.ts";
import { isAuthorized, readToken } from "./auth.ts";
import type { AgentConfig } from "./config.ts";
import { HttpError, readJsonBody, sendError, sendJson } from "./http-io.ts";
import { createLimiter } from "./limiter.ts";
import { resolveRunAs } from "./run-as.ts";
import { runCheck } from "./run-check.ts";
import { setTtySize } from "./tty.ts";
import { parseCheckRequest, parseTtySize } from "./validate.ts";

export const agentVersion = "1.0.0";

export interface AgentServer {
  port: number;
  /** Kills running checks, then closes every connection. */
  close(): Promise<void>;
}

/** `signal` is aborted when the client goes away, the request ends, or the agent stops. */
type Handler = (req: IncomingMessage, res: ServerResponse, signal: AbortSignal) => Promise<void>;

export async function startAgentServer(
  config: AgentConfig,
  log: (line: string) => void = console.log,
): Promise<AgentServer> {
  const limit = createLimiter(agentLimits.concurrentChecks);
  const stopping = new AbortController();

  const routes: Record<string, Record<string, Handler>> = {
    "/v1/health": {
      GET: async (_req, res) => {
        const runAs = await resolveRunAs(config);
        const body: AgentHealth = {
          status: "ok",
          version: agentVersion,
          runAs: { user: runAs.user, home: runAs.home },
        };
        sendJson(res, 200, body);
      },
    },
    "/v1/checks": {
      POST: async (req, res, signal) => {
        const request = parseCheckRequest(await readJsonBody(req, agentLimits.bodyBytes));
        const runAs = await resolveRunAs(config);
        const results = await Promise.all(
          request.checks.map((spec) => limit(() => runCheck(spec, runAs, { signal }))),
        );
        // Killed because the client left: nobody is there to read these results.
        if (signal.aborted) return;
        const body: AgentCheckResponse = { results };
        sendJson(res, 200, body);
      },
    },
    "/v1/tty": {
      POST: async (req, res) => {
        const size = parseTtySize(await readJsonBody(req, agentLimits.bodyBytes));
        await setTtySize(config.tty, size);
        const body: AgentTtySize = size;
        sendJson(res, 200, body);
      },
    },
  };

  const route = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal) => {
    const token = await readToken(config.tokenFile);
    if (!isAuthorized(req.headers.authorization, token)) {
      throw new HttpError(401, "unauthenticated", "This agent needs its session's bearer token.", {
        "WWW-Authenticate": "Bearer",
      });
    }
    const path = new URL(req.url ?? "/", "http://agent").pathname;
    const methods = routes[path];
    if (!methods) throw new HttpError(404, "not_found", `There is no ${path} here.`);
    const handler = methods[req.method ?? ""];
    if (!handler) {
      const allowed = Object.keys(methods).join(", ");
      throw new HttpError(405, "method_not_allowed", `${path} answers ${allowed} only.`, { Allow: allowed });
    }
    await handler(req, res, signal);
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    const requestEnd = new AbortController();
    const endRequest = () => requestEnd.abort();
    stopping.signal.addEventListener("abort", endRequest, { once: true });
    res.on("close", endRequest);
    route(req, res, requestEnd.signal)
      .catch((error: unknown) => {
        if (res.headersSent || res.destroyed) return;
        if (error instanceof HttpError) return sendError(res, error);
        log(`lab-agent: ${req.method} ${req.url} failed: ${(error as Error).stack ?? String(error)}`);
        sendError(res, new HttpError(500, "internal", "The agent failed; its log has the details."));
      })
      .finally(() => {
        // Checks a failed request left running are killed here.
        endRequest();
        stopping.signal.removeEventListener("abort", endRequest);
        log(`${req.method} ${req.url} ${res.statusCode} ${Math.round(performance.now() - started)}ms`);
      });
  });

  // Tracked by hand: server.closeAllConnections() arrived in Node 18.2, and the agent supports 18.0.
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      stopping.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
