// Deletes the VMs of sessions whose time is up. The expiry is read from the VMs themselves, so
// sessions that expired while the BFF was down are reaped on the first pass after it comes back, and
// several replicas reaping at once only repeat a delete the API answers 404 to.
import type { Session } from "../../common/api.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import type { SessionSource } from "../sessions/source.ts";
import { RepeatingWork } from "../replicas/repeating-work.ts";
import { placeHoldingStatuses } from "../sessions/status.ts";

export const defaultReapIntervalMs = 15_000;
/** Until the first pass succeeds (caches still loading), try again this often. */
const firstPassRetryMs = 250;

export interface ReaperDeps {
  cluster: Pick<ClusterClient, "deleteVirtualMachine">;
  source: SessionSource;
  now: () => Date;
  intervalMs?: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  /** Called for each session this pass deleted (not for one another replica deleted first). */
  onReaped?: (session: Session) => void;
}

export class SessionReaper {
  private readonly work: RepeatingWork;

  constructor(private readonly deps: ReaperDeps) {
    this.work = new RepeatingWork({
      pass: () => this.reapOnce(),
      intervalMs: deps.intervalMs ?? defaultReapIntervalMs,
      untilFirstSuccessMs: firstPassRetryMs,
      log: deps.log,
      failed: "reaping expired sessions failed; retrying",
    });
  }

  start(): void {
    this.work.start();
  }

  stop(): Promise<void> {
    return this.work.stop();
  }

  /** One pass: deletes every expired session that is not already going away. Returns the ids deleted. */
  async reapOnce(): Promise<string[]> {
    const { sessions } = await this.deps.source.snapshot();
    const now = this.deps.now().getTime();
    const expired = sessions.filter(
      (session) => placeHoldingStatuses.has(session.status) && Date.parse(session.expiresAt) <= now,
    );
    const reaped: string[] = [];
    for (const session of expired) {
      try {
        await this.deps.cluster.deleteVirtualMachine(session.id);
      } catch (error) {
        // Gone already: another replica, or the student, was quicker.
        if (error instanceof KubeStatusError && error.statusCode === 404) continue;
        throw error;
      }
      reaped.push(session.id);
      this.deps.log.info(
        { session: session.id, owner: session.owner, expiresAt: session.expiresAt },
        "session expired; VM deleted",
      );
      this.deps.onReaped?.(session);
    }
    return reaped;
  }
}
