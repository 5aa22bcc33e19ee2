// What a console should do, judged from its session. KubeVirt's console drops with the same 1006
// whether the VM was deleted, powered off, or a proxy cut an idle line, and refuses with 404 both
// before the VMI exists and after it is gone: only the session tells these apart.
import type { Session } from "../../common/api.ts";
import { notices, type Notice } from "./notices.ts";

export type ConsoleVerdict =
  /** The VMI is Running: (re)connect. */
  | { kind: "running" }
  /** The VM is on its way to Running (or restarting after the guest shut down): keep asking. */
  | { kind: "starting"; notice: Notice }
  /** The session is over: tell the viewers why and stop. */
  | { kind: "ended"; notice: Notice };

export function verdictFor(session: Session | undefined): ConsoleVerdict {
  if (!session) return { kind: "ended", notice: notices.sessionGone };
  switch (session.status) {
    case "running":
      return { kind: "running" };
    case "starting":
      return { kind: "starting", notice: notices.waitingForStart };
    case "stopping":
      // A guest that powered itself off leaves a Succeeded VMI; the VM (runStrategy Always) starts
      // a new one. Anything else stopping is the session being ended.
      return session.phase === "Succeeded"
        ? { kind: "starting", notice: notices.vmShutDown }
        : { kind: "ended", notice: notices.sessionStopped };
    case "failed":
      return { kind: "ended", notice: notices.sessionFailed(session) };
  }
}
