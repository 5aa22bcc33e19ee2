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
import { SearchBudget } from "./search-budget.ts";
import { WallStream, type WallConsoles } from "./wall-stream.ts";

export interface WallTiming {
  /** Screens go out at most this often (per wall). Default 1 s. */
  screenIntervalMs: number;
  /** The session list (status, hands, scores) is re-read this often. Default 2 s. */
  listIntervalMs: number;
}

/**
 * What one person's walls may take of the BFF: walls open at once (a TA with two screens and a spare
 * tab), and the share of the BFF's time their searches take, all their walls together.
 */
export const wallLimits = { wallsPerPerson: 3, searchShare: 0.25 } as const;

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
  /** Per person (username): their open walls and the search time those share. */
  const people = new Map<string, { walls: number; budget: SearchBudget }>();
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
    const user = login.user;
    const person = people.get(user.username) ?? {
      walls: 0,
      budget: new SearchBudget(wallLimits.searchShare, timing.screenIntervalMs * wallLimits.searchShare),
    };
    // Said on the socket, as a console's refusal is: a browser cannot read a refused upgrade's status.
    if (person.walls >= wallLimits.wallsPerPerson) {
      const refused = await acceptWebsocket(request, reply, server);
      refused?.send(
        JSON.stringify({ type: "refused", reason: "too_many_walls", limit: wallLimits.wallsPerPerson }),
      );
      refused?.close(1000, "refused");
      return;
    }
    // Counted before the upgrade is awaited, so upgrades sent at once cannot all pass the cap.
    person.walls += 1;
    people.set(user.username, person);
    const leave = () => {
      person.walls -= 1;
      if (person.walls === 0) people.delete(user.username);
    };
    const socket = await acceptWebsocket(request, reply, server);
    if (!socket) {
      leave();
      return;
    }
    const stream = new WallStream({
      socket,
      consoles: deps.consoles,
      listSessions: async () =>
        (await deps.sessions.list(user, { lab: labId, page: 1, pageSize: largestLab })).items,
      lastScore: deps.lastScore,
      lastInputs: deps.lastInputs,
      onSearched: deps.onSearched,
      searchBudget: person.budget,
      screenIntervalMs: timing.screenIntervalMs,
      listIntervalMs: timing.listIntervalMs,
      maxBufferedBytes,
      log: app.log,
    });
    open.set(stream, login.id);
    socket.once("close", () => {
      open.delete(stream);
      leave();
    });
    stream.start();
    void deps.audit?.record({ action: "wall-open", actor: user, labId }, request);
  });
}
