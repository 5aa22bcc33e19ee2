// GET /api/labs/:labId/wall, upgraded to a websocket: the class wall (wall-stream.ts), for staff;
// the access policy checks the Origin as for every socket (a websocket is not bound by CORS). Needs
// the console routes registered first: they route websocket upgrades through fastify.
import type { FastifyInstance } from "fastify";
import { WebSocketServer } from "ws";
import { grantedSignIn } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SignIns } from "../auth/sign-ins.ts";
import { acceptWebsocket } from "../console/websocket-upgrade.ts";
import { labNotFound } from "../errors/domain-error.ts";
import { parseOrThrow } from "../http/errors.ts";
import { LabIdParams } from "../http/params.ts";
import type { SessionService } from "../sessions/service.ts";
import { WallStream, type WallConsoles } from "./wall-stream.ts";

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
  signIns: SignIns;
  lastScore(sessionId: string): Promise<number | null>;
  /** When each session's console last had input (last-input.ts), null when never. */
  lastInputs(sessionIds: string[]): Promise<Map<string, string | null>>;
  /** A wall searched the screens due, in this long (lab_console_wall_search_seconds). */
  onSearched?(durationMs: number): void;
  audit?: AuditLog;
  timing?: Partial<WallTiming>;
}

const maxBufferedBytes = 1024 * 1024;
const largestLab = 1000;
// The browser sends only its search: at most 200 characters, each 6 bytes at worst in JSON (\u0001).
const maxClientMessageBytes = 2048;

export function registerWallRoutes(app: FastifyInstance, deps: WallRouteDeps): void {
  const timing: WallTiming = { screenIntervalMs: 1000, listIntervalMs: 2000, ...deps.timing };
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: maxClientMessageBytes,
    clientTracking: false,
  });
  const open = new Map<WallStream, string>();
  const stopListening = deps.signIns.onEnded((ended) => {
    for (const [stream, signInId] of open) if (signInId === ended.id) stream.close();
  });
  app.addHook("preClose", async () => {
    stopListening();
    for (const stream of open.keys()) stream.close();
  });

  const wallSocket = { config: { access: "staff", websocket: true } } as const;
  app.get("/api/labs/:labId/wall", wallSocket, async (request, reply) => {
    const login = grantedSignIn(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    if (!deps.labIds.has(labId)) throw labNotFound(labId);
    const socket = await acceptWebsocket(request, reply, server);
    if (!socket) return;
    const user = login.user;
    const stream = new WallStream({
      socket,
      consoles: deps.consoles,
      listSessions: async () =>
        (await deps.sessions.list(user, { lab: labId, page: 1, pageSize: largestLab })).items,
      lastScore: deps.lastScore,
      lastInputs: deps.lastInputs,
      onSearched: deps.onSearched,
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
