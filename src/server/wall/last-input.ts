// When each session's console last had input, for the class wall ("time since last input"). Two
// sources, each with a gap:
// - The console hub hears every key (and paste) of the consoles this replica holds, to the
//   millisecond, but nothing typed on another replica or before this process started.
// - The VM's last-active annotation (idle/console-activity.ts) is seen by every replica and
//   survives restarts, but is written at most once a minute, only in labs with an idle limit, and
//   also moves when the idle pass finds the student at work through the agent, or on a resume.
// The wall shows the newer of the two. While the console is open here that is the hub's time (the
// annotation lags it by up to a minute), unless the agent saw the student at work since the last
// key, which for "who stopped working?" is as good as a key. Elsewhere, the annotation.
// Either way it is input from whoever holds the keyboard: the owner, or staff who took it.
import { annotationKeys } from "../sessions/labels.ts";
import type { SessionSnapshot } from "../sessions/source.ts";

/** Sessions remembered at most: far more than one replica's consoles; the longest quiet go first. */
const rememberedSessions = 10_000;

export class ConsoleInputTimes {
  /** Per session, when the hub last heard input; the most recent last (a Map keeps insertion order). */
  private readonly heardAt = new Map<string, number>();

  constructor(private readonly now: () => Date) {}

  /** Input reached the session's VM from one of its consoles here. */
  heard(sessionId: string): void {
    this.heardAt.delete(sessionId);
    this.heardAt.set(sessionId, this.now().getTime());
    if (this.heardAt.size > rememberedSessions) {
      const longestQuiet = this.heardAt.keys().next().value;
      if (longestQuiet !== undefined) this.heardAt.delete(longestQuiet);
    }
  }

  /** For each session, the newer of what the hub heard and its VM's last-active annotation. */
  lastInputs(sessionIds: string[], snapshot: Pick<SessionSnapshot, "objects">): Map<string, string | null> {
    return new Map(
      sessionIds.map((id) => [
        id,
        this.lastInputAt(id, snapshot.objects.get(id)?.vm.metadata.annotations?.[annotationKeys.lastActive]),
      ]),
    );
  }

  /** Null when neither has one. */
  private lastInputAt(sessionId: string, lastActive: string | undefined): string | null {
    const marked = lastActive === undefined ? Number.NaN : Date.parse(lastActive);
    const latest = Math.max(
      this.heardAt.get(sessionId) ?? -Infinity,
      Number.isNaN(marked) ? -Infinity : marked,
    );
    return Number.isFinite(latest) ? new Date(latest).toISOString() : null;
  }
}
