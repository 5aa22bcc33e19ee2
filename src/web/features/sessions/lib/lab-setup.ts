// Whether a running lab VM has finished its set-up. KubeVirt reports Running once the guest boots,
// but cloud-init then runs the lab's set-up (its users, packages and runcmd) for about a minute more
// (a real lab measured Running at 23 s and the shell's prompt at about 70 s), and the console's prompt
// comes after it. cloud-init ends its last stage with one line (cc_final_message's default: "Cloud-init
// v. 24.1 finished at Mon, 07 Dec 2026 10:00:12 +0000. Datasource ….  Up 47.91 seconds"), which
// cloud-final.service prints on the console and so KubeVirt keeps in the VM's boot log. That line is
// the signal.
import type { BootLog, Session } from "../../../../common/api.ts";

export type LabSetup =
  /** Not running yet: the set-up has not started. */
  | { state: "waiting" }
  | { state: "running"; since: string }
  /** `at`: when cloud-init said it finished, if its line gave a time. */
  | { state: "finished"; at?: string }
  /** No way to tell: no boot log (logging off), or none read yet, or no line long after Running. */
  | { state: "unknown" };

/** Past this long after Running a set-up that never said it finished is not followed any more. */
export const setupFollowedForMs = 10 * 60_000;

// A console may prefix it ("[   47.9] cloud-init[602]: "); the time has no full stop in it.
const finishedLine = /Cloud-init v\. \S+ finished at ([^.]*)\./;

export function labSetup(session: Session, bootLog: BootLog | undefined, now: number): LabSetup {
  if (session.status !== "running") return { state: "waiting" };
  // A warm VM was set up before the class, ahead of its claim.
  if (session.start === "warm") return { state: "finished" };
  if (!bootLog || bootLog.logging === "off") return { state: "unknown" };
  const finished = cloudInitFinished(bootLog.lines);
  if (finished) return finished;
  const since = runningSince(session);
  return now - Date.parse(since) < setupFollowedForMs ? { state: "running", since } : { state: "unknown" };
}

function cloudInitFinished(lines: string[]): LabSetup | undefined {
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const match = finishedLine.exec(lines[index]!);
    if (!match) continue;
    const at = Date.parse(match[1]!);
    return Number.isNaN(at) ? { state: "finished" } : { state: "finished", at: new Date(at).toISOString() };
  }
  return undefined;
}

/** When the VMI reached Running (the session's creation if the timeline has no such entry). */
export function runningSince(session: Session): string {
  return session.timeline.find((entry) => entry.phase === "Running")?.at ?? session.createdAt;
}
