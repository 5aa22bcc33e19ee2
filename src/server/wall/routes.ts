// GET /api/labs/:labId/wall, upgraded to a websocket: the class wall (wall-stream.ts). Staff only,
// and the Origin is checked as for the console socket (a websocket is not bound by CORS). Needs the
// console routes registered first: they route websocket upgrades through fastify.
import type { FastifyInstance } from "fastify";
import { WebSocketServer } from "ws";
import { z } from "zod";
import { labIdPattern } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { findLoginSession } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { checkOrigin } from "../console/routes.ts";
import type { OwnNames } from "../http/own-names.ts";
import { acceptWebsocket, isWebsocketUpgrade } from "../console/websocket-upgrade.ts";
import { HttpError, notFound, parseOrThrow, unauthenticated } from "../http/errors.ts";
import type { SessionService } from "../sessions/service.ts";
import { WallStream, type WallConsoles } from "./wall-stream.ts";

const WallParams = z.object({ labId: z.string().max(40).regex(labIdPattern, "not a lab id") });

export interface WallTiming {
  /** Screens go out at most this often (per wall). Default 1 s. */
  screenIntervalMs: number;
  /** The session list (status, hands, scores) is re-read this often. Default 2 s. */
  listIntervalMs: number;
}

export interface WallRouteDeps {
  consoles: WallConsoles;
  sessions: SessionService;
  labIds: ReadonlySet<string>;
  loginSessions: LoginSessions;
  ownNames: OwnNames;
  lastScore(sessionId: string): Promise<number | null>;
  audit?: AuditLog;
  timing?: Partial<WallTiming>;
}

const maxBufferedBytes = 1024 * 1024;
const largestLab = 1000;

export function registerWallRoutes(app: FastifyInstance, deps: WallRouteDeps): void {
  const timing: WallTiming = { screenIntervalMs: 1000, listIntervalMs: 2000, ...deps.timing };
  const server = new WebSocketServer({ noServer: true, maxPayload: 1024, clientTracking: false });
  const open = new Map<WallStream, string>();
  const stopListening = deps.loginSessions.onEnded((ended) => {
    for (const [stream, loginSessionId] of open) if (loginSessionId === ended.id) stream.close();
  });
  app.addHook("preClose", async () => {
    stopListening();
    for (const stream of open.keys()) stream.close();
  });

  app.get("/api/labs/:labId/wall", async (request, reply) => {
    if (!isWebsocketUpgrade(request)) {
      throw new HttpError(
        426,
        "upgrade_required",
        "The class wall is a websocket; open it from the wall page.",
      );
    }
    checkOrigin(request, deps.ownNames);
    const login = findLoginSession(request, deps.loginSessions);
    if (!login) throw unauthenticated();
    if (login.user.role === "student") {
      throw new HttpError(403, "forbidden", "Only TAs and instructors can open the class wall.");
    }
    const { labId } = parseOrThrow(WallParams, request.params);
    if (!deps.labIds.has(labId)) throw notFound(`There is no lab called ${labId}.`);
    const socket = await acceptWebsocket(request, reply, server);
    if (!socket) return;
    const user = login.user;
    const stream = new WallStream({
      socket,
      consoles: deps.consoles,
      listSessions: async () =>
        (await deps.sessions.list(user, { lab: labId, page: 1, pageSize: largestLab })).items,
      lastScore: deps.lastScore,
      screenIntervalMs: timing.screenIntervalMs,
      listIntervalMs: timing.listIntervalMs,
      maxBufferedBytes,
      log: app.log,
    });
    open.set(stream, login.id);
    socket.once("close", () => open.delete(stream));
    stream.start();
    void deps.audit?.record({ action: "wall-open", actor: user, labId }, request);
  });
}
