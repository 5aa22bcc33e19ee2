// What changed about the keyboard between two viewer lists, for the live region of the console and of
// the screen: staff typing in a student's VM is news for everyone watching, the student above all, and
// so is the keyboard coming back. The owner taking it back from their own other window is not.
import type { ConsoleViewerEntry } from "../../common/console-protocol.ts";
import type { Role } from "../../common/api.ts";

export interface ConsoleViewers {
  viewers: ConsoleViewerEntry[];
  holder: string;
}

export type KeyboardNews =
  | { kind: "taken"; username: string; role: Role }
  /** Staff no longer hold it (they gave it back, left, or the student took it back). */
  | { kind: "returned"; username: string; role: Role };

const isStaff = (role: Role) => role !== "student";

/** Undefined when nothing worth saying happened (or this is the first list the viewer gets). */
export function keyboardNews(
  previous: ConsoleViewers | null,
  next: ConsoleViewers,
): KeyboardNews | undefined {
  if (!previous || previous.holder === next.holder) return undefined;
  const taker = next.viewers.find((viewer) => viewer.username === next.holder);
  if (taker && isStaff(taker.role)) return { kind: "taken", username: taker.username, role: taker.role };
  const former = previous.viewers.find((viewer) => viewer.username === previous.holder);
  if (former && isStaff(former.role))
    return { kind: "returned", username: former.username, role: former.role };
  return undefined;
}
