// GET /api/sessions/:id/console, /api/sessions/:id/terminals/:terminal and /api/sessions/:id/vnc
// (the VM's screen), upgraded to websockets.
// Everything is checked before the upgrade, so a refused browser gets a plain HTTP answer: the
// access policy checks the Origin, the sign-in and who may see the session (access/policy.ts), these
// routes which consoles the lab offers and how often a person may attach.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { WebSocketServer } from "ws";
import * as z from "zod/mini";
import type { Me } from "../../common/api.ts";
import { ConsoleQuery, graphicalConsole, serialConsole } from "../../common/console-protocol.ts";
import { grantedSession, grantedSignIn } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SignIns } from "../auth/sign-ins.ts";
import { DomainError } from "../errors/domain-error.ts";
import { parseOrThrow } from "../http/errors.ts";
import { TerminalNumber } from "../http/params.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import { detailsOf, type ConsoleHub } from "./hub.ts";
import type { ConsolePlacement } from "./placement.ts";
import type { ViewerAccess } from "./viewer.ts";
import { endedMessage, notices, type Notice } from "./notices.ts";
import { acceptWebsocket, routeWebsocketUpgrades } from "./websocket-upgrade.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** The console hub, for tests and the bench to inspect. */
    consoleHub: ConsoleHub;
  }
}

export interface ConsoleRouteDeps {
  hub: ConsoleHub;
  /** Joins each browser to the hub here, or to the replica holding the VM's console (docs/scaling.md). */
  placement: ConsolePlacement;
  signIns: SignIns;
  /** Attaching and detaching are recorded here, as owner or observer. */
  audit?: AuditLog;
  /** A browser attached (+1) or detached (-1), for the viewers gauge. */
  onViewers?: (change: 1 | -1, as: "owner" | "observer") => void;
  /** How many terminals a session of this lab may open besides its serial console. */
  terminalsOf(labId: string): number;
  /** Whether the lab offers its VMs' screens (session.consoles has "graphical"). */
  offersScreen(labId: string): boolean;
}

export function registerConsoleRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  const { hub, signIns } = deps;
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: hub.limits.maxFrameBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  routeWebsocketUpgrades(app);
  app.decorate("consoleHub", hub);
  // A browser reconnecting in a loop costs two audit rows and a replay each time.
  const attaches = new RateLimiter({ burst: hub.limits.attachBurst, refillMs: hub.limits.attachRefillMs });
  const openSockets = new Map<string, number>();
  const stopListening = signIns.onEnded((ended) => {
    hub.endSignIn(ended.id);
    deps.placement.endSignIn(ended.id);
  });
  // Before the server waits for open connections to end: forwarded consoles would otherwise keep it
  // up. The hub itself is closed by its owner, buildApp, before the leases go.
  app.addHook("preClose", async () => {
    stopListening();
    deps.placement.close();
  });

  const consoleSocket = { config: { access: "session", websocket: true } } as const;

  async function openConsole(request: FastifyRequest, reply: FastifyReply, terminal: number): Promise<void> {
    const login = grantedSignIn(request);
    const session = grantedSession(request);
    const { mode } = parseOrThrow(ConsoleQuery, request.query);
    const access = accessFor(login.user, session.owner, mode);
    const as = access === "owner" ? "owner" : "observer";
    const person = `${session.id}/${terminal}/${login.user.username}`;
    // Said on the socket: a browser cannot read the status of a refused upgrade, and would only
    // show "reconnecting" and try again.
    const waitSeconds = attaches.waitSeconds(person);
    if ((openSockets.get(person) ?? 0) >= hub.limits.socketsPerPerson) {
      return endAtOnce(request, reply, server, notices.tooManyWindows);
    }
    if (waitSeconds > 0) {
      return endAtOnce(request, reply, server, notices.reopenedTooOften(waitSeconds));
    }
    // Counted before the upgrade is awaited, so upgrades sent at once cannot all pass the cap.
    openSockets.set(person, (openSockets.get(person) ?? 0) + 1);
    const release = () => {
      const left = (openSockets.get(person) ?? 1) - 1;
      if (left > 0) openSockets.set(person, left);
      else openSockets.delete(person);
    };
    const details = detailsOf(terminal, { as });
    let accepted = false;
    try {
      await deps.placement.open({
        request,
        reply,
        server,
        session,
        terminal,
        identity: {
          username: login.user.username,
          role: login.user.role,
          access,
          signInId: login.id,
          loginExpiresAt: login.expiresAt,
        },
        onAccepted: (socket) => {
          accepted = true;
          // Only attaches that became consoles count: a refused one (503 while the console moves
          // between replicas) costs nothing and may be tried again.
          attaches.take(person);
          deps.onViewers?.(1, as);
          socket.once("close", () => {
            release();
            deps.onViewers?.(-1, as);
            void deps.audit?.record(
              { action: "console-detach", actor: login.user, session, details },
              request,
            );
          });
          void deps.audit?.record({ action: "console-attach", actor: login.user, session, details }, request);
        },
      });
    } finally {
      if (!accepted) release();
    }
  }

  app.get("/api/sessions/:id/console", consoleSocket, (request, reply) =>
    openConsole(request, reply, serialConsole),
  );

  // A lab's terminals: shells through the VM's agent, shown, shared and recorded as the console is.
  app.get("/api/sessions/:id/terminals/:terminal", consoleSocket, (request, reply) => {
    const { terminal } = parseOrThrow(TerminalParams, request.params);
    const session = grantedSession(request);
    if (terminal > deps.terminalsOf(session.labId)) {
      throw new DomainError(
        "not_found",
        "terminal_not_found",
        `This lab has no terminal ${terminal}: it offers only its serial console and the terminals it names.`,
        { terminal },
      );
    }
    return openConsole(request, reply, terminal);
  });

  // The VM's screen: QEMU's VNC through KubeVirt, shared as the console is (shared-screen.ts).
  app.get("/api/sessions/:id/vnc", consoleSocket, (request, reply) => {
    const session = grantedSession(request);
    if (!deps.offersScreen(session.labId)) {
      throw new DomainError(
        "not_found",
        "screen_not_offered",
        "This lab offers no graphical console: its sessions show the serial console only.",
      );
    }
    return openConsole(request, reply, graphicalConsole);
  });
}

const TerminalParams = z.object({ terminal: TerminalNumber });

/** Accepts the socket only to say why it cannot be a console ("ended": reconnecting will not help). */
async function endAtOnce(
  request: FastifyRequest,
  reply: FastifyReply,
  server: WebSocketServer,
  notice: Notice,
): Promise<void> {
  const socket = await acceptWebsocket(request, reply, server);
  if (!socket) return;
  socket.send(JSON.stringify(endedMessage(notice)));
  socket.close(1000, "refused");
}

function accessFor(user: Me, owner: string, mode: ConsoleQuery["mode"]): ViewerAccess {
  if (user.username === owner) return mode === "observe" ? "watcher" : "owner";
  // Only staff get this far for someone else's session (students got a 404).
  if (mode !== "observe") {
    throw new DomainError(
      "forbidden",
      "staff_must_observe",
      "Staff open a student's console read-only: add ?mode=observe, then take the keyboard if needed.",
    );
  }
  return "staff";
}
