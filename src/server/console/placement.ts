// Consoles across replicas: a browser's console socket may reach any replica, but the VM's console
// connection is held by one (replicas/console-ownership.ts). The replica the browser reached
// checks who the viewer is and what they may do, then either joins the browser to its own hub or
// opens a socket to the holder's internal endpoint, carrying that verdict signed
// (access/forward-token.ts), and pipes frames both ways (forwarded-pipe.ts).
import type { IncomingMessage } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import type { ConsoleOwnership } from "../replicas/console-ownership.ts";
import { grantedForward } from "../access/policy.ts";
import { forwardHeader, signForward } from "../access/forward-token.ts";
import type { Peer } from "../replicas/membership.ts";
import { DomainError } from "../errors/domain-error.ts";
import { HttpError } from "../http/errors.ts";
import { ForwardedPipe, HolderSocket } from "./forwarded-pipe.ts";
import { notices } from "./notices.ts";
import type { ConsoleHub } from "./hub.ts";
import type { ViewerIdentity } from "./viewer.ts";
import { acceptWebsocket } from "./websocket-upgrade.ts";

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
  /** Which of its consoles (hub.ts serialConsole, or a lab terminal). */
  terminal: number;
  identity: ViewerIdentity;
  /** The browser's socket, once accepted, wherever its console lives (for audit and gauges). */
  onAccepted(socket: WebSocket): void;
}

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
      const peer = await ownership.claim(input.session.id, async (home) => {
        if (home.kind === "peer") return home.peer;
        // Inside the claim: the console cannot be released between taking its lease and joining.
        const socket = await acceptWebsocket(input.request, input.reply, input.server);
        if (socket) {
          input.onAccepted(socket);
          hub.join(input.session, socket, input.identity, input.terminal);
        }
        return undefined;
      });
      if (!peer) return;
      try {
        const holder = await this.connect(peer, input);
        const browser = await acceptWebsocket(input.request, input.reply, input.server);
        if (!browser) {
          holder.socket.terminate();
          return;
        }
        input.onAccepted(browser);
        this.track(new ForwardedPipe(browser, holder, input.identity.signInId));
        return;
      } catch (error) {
        if (error instanceof PeerRefused && error.statusCode === 409 && attempt < placementAttempts) continue;
        this.deps.log.warn(
          { err: error, session: input.session.id, peer: peer.identity },
          "could not reach the replica holding a console",
        );
        throw new DomainError(
          "unavailable",
          "console_moving",
          "The console is moving to another server. It reconnects in a moment.",
        );
      }
    }
  }

  /** A sign-in ended: its forwarded sockets close as the hub closes its own. */
  endSignIn(signInId: string): void {
    for (const pipe of [...this.pipes]) {
      if (pipe.signInId === signInId) {
        pipe.end(notices.signedOut);
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

  private connect(peer: Peer, input: OpenConsole): Promise<HolderSocket> {
    const token = signForward(this.deps.secret, {
      sessionId: input.session.id,
      owner: input.session.owner,
      terminal: input.terminal,
      identity: input.identity,
    });
    const url = new URL(
      internalConsolePath.replace(":id", encodeURIComponent(input.session.id)),
      peer.endpoint,
    );
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url, {
      headers: { [forwardHeader]: token },
      perMessageDeflate: false,
      handshakeTimeout: 5_000,
    });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new HolderSocket(socket)));
      socket.once("unexpected-response", (_request, response: IncomingMessage) => {
        response.resume();
        socket.terminate();
        reject(new PeerRefused(response.statusCode ?? 0));
      });
      socket.once("error", reject);
    });
  }
}

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
  const replicaSocket = { config: { access: "replica-forward", websocket: true } } as const;
  app.get(internalConsolePath, replicaSocket, async (request, reply) => {
    const claims = grantedForward(request);
    const id = claims.sessionId;
    await deps.ownership.claim(id, async (home) => {
      // The lease moved on since the other replica read it: it looks again.
      if (home.kind !== "here")
        throw new HttpError(409, "conflict", "This replica does not hold the console.");
      const socket = await acceptWebsocket(request, reply, server);
      if (socket) deps.hub.join({ id, owner: claims.owner }, socket, claims.identity, claims.terminal);
    });
  });
}
