// The consoles put together: the hub that holds each VM's one console connection and its viewers,
// where a browser joins it (this replica or the one holding the VM's console), and the routes.
// buildApp creates them once the agents, recordings and idle handling they report to exist.
import type { FastifyInstance } from "fastify";
import type { Lab, LabConsole } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SignIns } from "../auth/sign-ins.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { AppMetrics } from "../metrics/app-metrics.ts";
import type { RecordingStore } from "../recordings/recording-store.ts";
import type { Coordination } from "../replicas/coordination.ts";
import { ConsoleHub, type ConsoleHubDeps } from "./hub.ts";
import type { ConsoleLimits } from "./limits.ts";
import { ConsolePlacement, registerInternalConsoleRoute } from "./placement.ts";
import { registerConsoleRoutes } from "./routes.ts";

export interface ConsolesDeps extends Pick<
  ConsoleHubDeps,
  "openTerminal" | "setGuestSize" | "findSession" | "onInput" | "readConsoleLog"
> {
  cluster: ClusterClient;
  labs: Lab[];
  coordination: Coordination;
  signIns: SignIns;
  /** Signs the forwarded joins between replicas. */
  secret: string;
  audit: AuditLog;
  metrics: AppMetrics;
  recordings?: RecordingStore;
  limits?: Partial<ConsoleLimits>;
}

/** The consoles a lab's sessions offer; a lab that names none has its serial console. */
export function consolesOfLab(labs: Lab[], labId: string): readonly LabConsole[] {
  return labs.find((lab) => lab.id === labId)?.session.consoles ?? ["serial"];
}

export function createConsoles(app: FastifyInstance, deps: ConsolesDeps): ConsoleHub {
  const { coordination, metrics } = deps;
  const hub: ConsoleHub = new ConsoleHub({
    connect: deps.cluster.openConsole,
    connectScreen: deps.cluster.openScreen,
    setGuestSize: deps.setGuestSize,
    openTerminal: deps.openTerminal,
    findSession: deps.findSession,
    log: app.log,
    limits: deps.limits,
    recordings: deps.recordings,
    onClosed: (id) => void coordination.consoles.release(id, () => hub.has(id)),
    onUpstreamReconnected: () => metrics.consoleUpstreamReconnects.inc(),
    onInput: deps.onInput,
    audit: deps.audit,
    readConsoleLog: deps.readConsoleLog,
  });
  // One connection per VM across replicas: each browser goes to the replica holding the VM's console.
  coordination.consoles.onLost(() => hub.letGo());
  const placement = new ConsolePlacement({
    ownership: coordination.consoles,
    hub,
    secret: deps.secret,
    log: app.log,
  });
  if (coordination.replicated) {
    registerInternalConsoleRoute(app, {
      ownership: coordination.consoles,
      hub,
      secret: deps.secret,
      maxFrameBytes: hub.limits.maxFrameBytes,
    });
  }
  registerConsoleRoutes(app, {
    hub,
    placement,
    signIns: deps.signIns,
    audit: deps.audit,
    onViewers: (change, as) => metrics.consoleViewers.inc({ role: as }, change),
    terminalsOf: (labId) => deps.labs.find((lab) => lab.id === labId)?.session.terminals ?? 0,
    offersScreen: (labId) => consolesOfLab(deps.labs, labId).includes("graphical"),
  });
  return hub;
}
