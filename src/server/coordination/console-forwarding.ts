// Consoles across replicas: a browser's console socket may reach any replica, but the VM's console
// connection is held by one (console-ownership.ts). The replica the browser reached checks who the
// viewer is and what they may do, then either joins the browser to its own hub or opens a socket to
// the holder's internal endpoint, carrying that verdict signed (forward-token.ts), and pipes frames
// both ways untouched: screen replay, acks, keyboard and close codes all stay the holder's business.
import type { IncomingMessage } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import WebSocket, { WebSocketServer, type RawData } from "ws";
import { z } from "zod";
import type { ConsoleServerMessage } from "../../common/console-protocol.ts";
import type { ConsoleHub } from "../console/hub.ts";
import type { ViewerIdentity } from "../console/viewer.ts";
import { acceptWebsocket, isWebsocketUpgrade } from "../console/websocket-upgrade.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import { ConsoleUnavailableError, type ConsoleOwnership } from "./console-ownership.ts";
import { forwardHeader, signForward, verifyForward } from "./forward-token.ts";
import type { Peer } from "./membership.ts";

export const internalConsolePath = "/internal/consoles/:id";

export interface ConsolePlacementDeps {
  ownership: ConsoleOwnership;
  hub: ConsoleHub;
  /** The server secret every replica shares (it signs the cookies too). */
  secret: string;
  log: FastifyBaseLogger;
}

export interface OpenConsole {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The console routes' websocket server (frame limits as for any browser). */
  server: WebSocketServer;
  session: { id: string; owner: string };
  identity: ViewerIdentity;
  /** The browser's socket, once accepted, wherever its console lives (for audit and gauges). */
  onAccepted(socket: WebSocket): void;
}

// A browser socket's send buffer beyond which the holder's frames stop being read, and below
// which reading resumes: the holder's own flow control then sees the browser as behind.
const pipeHighWatermark = 1024 * 1024;
const pipeLowWatermark = 256 * 1024;
// Attempts when the holder moves between the lease read and the connection (it let go meanwhile).
const placementAttempts = 3;

class PeerRefused extends Error {
  constructor(readonly statusCode: number) {
    super(`the replica holding the console answered ${statusCode}`);
  }
}

/** Places browsers' console sockets on the replica holding the VM's console. */
export class ConsolePlacement {
  private readonly pipes = new Set<ForwardedPipe>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConsolePlacementDeps) {}

  /** Joins the browser to the session's console here, or forwards it to the replica holding it. */
  async open(input: OpenConsole): Promise<void> {
    const { ownership, hub } = this.deps;
    for (let attempt = 1; ; attempt++) {
      let peer: Peer | undefined;
      try {
        peer = await ownership.claim(input.session.id, async (home) => {
          if (home.kind === "peer") return home.peer;
          // Inside the claim: the console cannot be released between taking its lease and joining.
          const socket = await acceptWebsocket(input.request, input.reply, input.server);
          if (socket) {
            input.onAccepted(socket);
            hub.join(input.session, socket, input.identity);
          }
          return undefined;
        });
      } catch (error) {
        throw unavailable(error);
      }
      if (!peer) return;
      try {
        const upstream = await this.connect(peer, input);
        const browser = await acceptWebsocket(input.request, input.reply, input.server);
        if (!browser) {
          upstream.socket.terminate();
          return;
        }
        input.onAccepted(browser);
        this.track(new ForwardedPipe(browser, upstream, input.identity.loginSessionId));
        return;
      } catch (error) {
        if (error instanceof PeerRefused && error.statusCode === 409 && attempt < placementAttempts) continue;
        this.deps.log.warn(
          { err: error, session: input.session.id, peer: peer.identity },
          "could not reach the replica holding a console",
        );
        throw new HttpError(
          503,
          "unavailable",
          "The console is moving to another server. It reconnects in a moment.",
        );
      }
    }
  }

  /** A sign-in ended: its forwarded sockets close as the hub closes its own. */
  endLoginSession(loginSessionId: string): void {
    for (const pipe of [...this.pipes]) {
      if (pipe.loginSessionId === loginSessionId) {
        pipe.end("You signed out. Sign in again to reopen the console.");
      }
    }
  }

  /** How many browsers this replica forwards to others (for tests and the bench). */
  get forwardedCount(): number {
    return this.pipes.size;
  }

  close(): void {
    for (const pipe of [...this.pipes]) pipe.goAway();
  }

  private track(pipe: ForwardedPipe): void {
    this.pipes.add(pipe);
    // The holder pings only this replica's end: browsers of forwarded consoles are pinged from here.
    this.heartbeat ??= setInterval(() => {
      for (const each of this.pipes) each.heartbeat();
    }, this.deps.hub.limits.pingIntervalMs);
    pipe.onClosed(() => {
      this.pipes.delete(pipe);
      if (this.pipes.size > 0) return;
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    });
  }

  private connect(peer: Peer, input: OpenConsole): Promise<Upstream> {
    const token = signForward(this.deps.secret, {
      sessionId: input.session.id,
      owner: input.session.owner,
      identity: input.identity,
    });
    const url = new URL(
      internalConsolePath.replace(":id", encodeURIComponent(input.session.id)),
      peer.endpoint,
    );
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const upstream = new WebSocket(url, {
      headers: { [forwardHeader]: token },
      perMessageDeflate: false,
      handshakeTimeout: 5_000,
    });
    return new Promise((resolve, reject) => {
      upstream.once("open", () => resolve(new Upstream(upstream)));
      upstream.once("unexpected-response", (_request, response: IncomingMessage) => {
        response.resume();
        upstream.terminate();
        reject(new PeerRefused(response.statusCode ?? 0));
      });
      upstream.once("error", reject);
    });
  }
}

function unavailable(error: unknown): unknown {
  if (error instanceof ConsoleUnavailableError) return new HttpError(503, "unavailable", error.message);
  return error;
}

/**
 * The socket to the holder, keeping what it sends before the browser's handshake is done: the
 * holder greets a new viewer at once (status, keyboard, the screen), and none of that may be lost.
 */
class Upstream {
  private early: { data: RawData; isBinary: boolean }[] | undefined = [];
  private readonly keep = (data: RawData, isBinary: boolean) => this.early?.push({ data, isBinary });

  constructor(readonly socket: WebSocket) {
    socket.on("message", this.keep);
    socket.on("error", () => undefined);
  }

  /** Hands what arrived so far to `deliver`, then everything that follows. */
  deliverTo(deliver: (data: RawData, isBinary: boolean) => void): void {
    this.socket.off("message", this.keep);
    for (const frame of this.early ?? []) deliver(frame.data, frame.isBinary);
    this.early = undefined;
    this.socket.on("message", deliver);
  }
}

/** One browser's console socket forwarded to the holder: frames both ways, closes mirrored. */
class ForwardedPipe {
  private answeredPing = true;
  private closed = false;
  private readonly closedListeners: (() => void)[] = [];

  private readonly upstream: WebSocket;

  constructor(
    private readonly browser: WebSocket,
    held: Upstream,
    readonly loginSessionId: string,
  ) {
    const upstream = held.socket;
    this.upstream = upstream;
    browser.on("message", (data: RawData, isBinary: boolean) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    });
    held.deliverTo((data, isBinary) => this.toBrowser(data, isBinary));
    browser.on("pong", () => {
      this.answeredPing = true;
    });
    browser.on("error", () => undefined);
    browser.on("close", (code: number, reason: Buffer) => this.closeBoth(upstream, code, reason));
    upstream.on("close", (code: number, reason: Buffer) => this.closeBoth(browser, code, reason));
    // The holder went away during the browser's handshake: the browser reconnects and looks again.
    if (upstream.readyState !== WebSocket.OPEN) this.closeBoth(browser, 1006, Buffer.alloc(0));
  }

  onClosed(listener: () => void): void {
    this.closedListeners.push(listener);
  }

  heartbeat(): void {
    if (!this.answeredPing) {
      this.browser.terminate();
      return;
    }
    this.answeredPing = false;
    this.browser.ping();
  }

  end(reason: string): void {
    const message: ConsoleServerMessage = { type: "ended", reason };
    if (this.browser.readyState === WebSocket.OPEN) this.browser.send(JSON.stringify(message));
    this.browser.close(1000, "console ended");
  }

  goAway(): void {
    this.browser.close(1001, "server shutting down");
  }

  private toBrowser(data: RawData, isBinary: boolean): void {
    const { browser, upstream } = this;
    if (browser.readyState !== WebSocket.OPEN) return;
    browser.send(data, { binary: isBinary }, () => {
      if (upstream.isPaused && browser.bufferedAmount < pipeLowWatermark) upstream.resume();
    });
    if (!upstream.isPaused && browser.bufferedAmount > pipeHighWatermark) upstream.pause();
  }

  /** The other side closes the way this one did; a close without a code (1005, 1006) is cut the same way. */
  private closeBoth(other: WebSocket, code: number, reason: Buffer): void {
    if (!this.closed) {
      this.closed = true;
      for (const listener of this.closedListeners) listener();
    }
    if (other.readyState === WebSocket.CLOSED) return;
    if (code === 1005) other.close();
    else if (code === 1006 || code === 1015 || code === 1004) other.terminate();
    else other.close(code, reason);
  }
}

const InternalParams = z.object({ id: z.string().max(63) });

/**
 * The holder's side: GET /internal/consoles/:id, a websocket from another replica carrying a signed
 * viewer. Not for browsers (docs/scaling.md: the ingress must not route /internal/).
 */
export function registerInternalConsoleRoute(
  app: FastifyInstance,
  deps: { ownership: ConsoleOwnership; hub: ConsoleHub; secret: string; maxFrameBytes: number },
): void {
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: deps.maxFrameBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  app.get(internalConsolePath, async (request, reply) => {
    if (!isWebsocketUpgrade(request)) {
      throw new HttpError(426, "upgrade_required", "This endpoint is a websocket for other replicas.");
    }
    const { id } = parseOrThrow(InternalParams, request.params);
    const claims = verifyForward(deps.secret, headerValue(request.headers[forwardHeader]), id);
    if (!claims) throw new HttpError(401, "unauthenticated", "A replica's signed forward is required.");
    try {
      await deps.ownership.claim(id, async (home) => {
        // The lease moved on since the other replica read it: it looks again.
        if (home.kind !== "here")
          throw new HttpError(409, "conflict", "This replica does not hold the console.");
        const socket = await acceptWebsocket(request, reply, server);
        if (socket) deps.hub.join({ id, owner: claims.owner }, socket, claims.identity);
      });
    } catch (error) {
      throw unavailable(error);
    }
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
