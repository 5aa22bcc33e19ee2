// Labs and sessions for grading tests, small with overrides; and a session list the test controls,
// standing in for the cluster's view of which VMs exist and run.
import type { Session } from "../../../common/api.ts";
import type { Lab, LabCheck } from "../../../common/lab.ts";
import type { SessionSource, SessionSnapshot } from "../../sessions/source.ts";

export function aCheck(overrides: Partial<LabCheck> & Pick<LabCheck, "id" | "run">): LabCheck {
  return { title: `Check ${overrides.id}`, points: 1, timeoutSeconds: 10, selfCheck: false, ...overrides };
}

export function aGradingLab(checks: LabCheck[], overrides: Partial<Lab> = {}): Lab {
  return {
    id: "linux-basics",
    title: "Linux basics",
    description: "",
    vm: { cpu: 1, memory: "2Gi", image: "quay.io/containerdisks/fedora:41", nested: false, cloudInit: null },
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
    checks,
    ...overrides,
  };
}

export function aSession(overrides: Partial<Session> & Pick<Session, "id" | "owner">): Session {
  return {
    labId: "linux-basics",
    section: null,
    status: "running",
    phase: "Running",
    createdAt: "2030-01-01T09:00:00.000Z",
    expiresAt: "2030-01-01T10:00:00.000Z",
    extensions: 0,
    timeline: [],
    message: null,
    notice: null,
    start: "cold",
    ...overrides,
  };
}

/** Also a SessionSource, so the real SessionService can decide who sees which of these sessions. */
export class FixedSessions implements SessionSource {
  /** Set to make snapshot() fail as when the cluster does not answer. */
  unavailable: Error | null = null;

  constructor(public sessions: Session[]) {}

  async snapshot(): Promise<SessionSnapshot> {
    if (this.unavailable) throw this.unavailable;
    return { sessions: [...this.sessions], objects: new Map(), warm: [], stale: false };
  }

  version(): undefined {
    return undefined;
  }

  async waitForVm(): Promise<boolean> {
    return true;
  }

  remove(sessionId: string): void {
    this.sessions = this.sessions.filter((session) => session.id !== sessionId);
  }
}
