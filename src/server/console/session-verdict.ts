// What a console should do, judged from its session. KubeVirt's console drops with the same 1006
// whether the VM was deleted, powered off, or a proxy cut an idle line, and refuses with 404 both
// before the VMI exists and after it is gone: only the session tells these apart.
import type { Session } from "../../common/api.ts";

export type ConsoleVerdict =
  /** The VMI is Running: (re)connect. */
  | { kind: "running" }
  /** The VM is on its way to Running (or restarting after the guest shut down): keep asking. */
  | { kind: "starting"; message: string }
  /** The session is over: tell the viewers why and stop. */
  | { kind: "ended"; reason: string };

export function verdictFor(session: Session | undefined): ConsoleVerdict {
  if (!session) {
    return { kind: "ended", reason: "This session has ended: its VM no longer exists." };
  }
  switch (session.status) {
    case "running":
      return { kind: "running" };
    case "starting":
      return { kind: "starting", message: "Waiting for the VM to start…" };
    case "stopping":
      // A guest that powered itself off leaves a Succeeded VMI; the VM (runStrategy Always) starts
      // a new one. Anything else stopping is the session being ended.
      return session.phase === "Succeeded"
        ? { kind: "starting", message: "The VM shut down; waiting for it to start again…" }
        : { kind: "ended", reason: "This session has ended: its VM was stopped." };
    case "failed":
      return { kind: "ended", reason: `${session.message ?? "The VM failed"}.` };
  }
}
