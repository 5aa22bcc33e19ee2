// Console input as idle handling sees it. The replica holding a session's console hears its keys
// (console/hub.ts); the idle pass may run on another replica, so the time is written on the VM, at
// most once per `writeIntervalMs` per session: a class typing away costs the API one patch per
// student a minute, not one per key. A key while the session is warned is written at once and clears
// the warning, so the page stops warning within a poll.
import type { Session } from "../../common/api.ts";
import { activityPatch, patchMarks, type IdleCluster } from "./idle-marks.ts";

export const defaultActivityWriteIntervalMs = 60_000;

export interface ConsoleActivityDeps {
  cluster: IdleCluster;
  findSession(id: string): Promise<Session | undefined>;
  /** Only sessions of labs with an idle limit are written for. */
  hasIdleLimit(labId: string): boolean;
  now: () => Date;
  writeIntervalMs?: number;
  log: { warn(object: object, message: string): void };
}

export class ConsoleActivity {
  /** When each session's activity was last written, or is being written. */
  private readonly written = new Map<string, number>();
  private readonly writing = new Set<string>();

  constructor(private readonly deps: ConsoleActivityDeps) {}

  /** A key (or paste) reached the session's VM from one of its consoles. */
  input(sessionId: string): void {
    if (this.writing.has(sessionId)) return;
    const now = this.deps.now();
    const last = this.written.get(sessionId);
    const interval = this.deps.writeIntervalMs ?? defaultActivityWriteIntervalMs;
    this.writing.add(sessionId);
    void this.write(sessionId, now, last !== undefined && now.getTime() - last < interval)
      .catch((error: unknown) =>
        this.deps.log.warn({ err: error, sessionId }, "recording console activity failed"),
      )
      .finally(() => this.writing.delete(sessionId));
  }

  private async write(sessionId: string, now: Date, recent: boolean): Promise<void> {
    const session = await this.deps.findSession(sessionId);
    if (!session || !this.deps.hasIdleLimit(session.labId)) return;
    // A paused session is not woken by keys: the student resumes it (its input waits in the line).
    if (session.idle?.state === "paused") return;
    const warned = session.idle?.state === "warning";
    if (recent && !warned) return;
    this.written.set(sessionId, now.getTime());
    await patchMarks(this.deps.cluster, sessionId, activityPatch(now, warned));
  }
}
