// A person's own ended sessions, for their home page: a record that a lab was done, and how the last
// "Check my work" went. Sessions live only as VMs, so once one ends the console keeps no session; the
// audit log does keep every launch and end (with the session's lab and owner), and the grading
// database every self-check. Both are read by owner through their indexes: a few queries per page load.
import type { PastSession, PastSessionList } from "../../common/api.ts";
import type { AuditEntry } from "../../common/operations-api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SelfCheckRecord } from "../grading/repository.ts";

/** The newest this many: a term's labs, not a transcript. */
export const pastSessionsShown = 20;

type Launch = AuditEntry & { sessionId: string; labId: string };

export interface PastSessionsDeps {
  audit: Pick<AuditLog, "list">;
  lastSelfCheck(sessionId: string): Promise<SelfCheckRecord | undefined>;
  /** The sessions that have not ended: their VMs are still in the cluster. */
  liveSessionIds(): Promise<ReadonlySet<string>>;
}

export async function pastSessionsOf(username: string, deps: PastSessionsDeps): Promise<PastSessionList> {
  const live = await deps.liveSessionIds();
  // Staff may launch too; a launch's actor is its owner, and an end's owner is the session's.
  const launches = (await deps.audit.list({ user: username, action: "launch", limit: 100 })).items.filter(
    (entry): entry is Launch =>
      entry.owner === username &&
      entry.sessionId !== null &&
      entry.labId !== null &&
      !live.has(entry.sessionId),
  );
  const shown = launches.slice(0, pastSessionsShown);
  const ends = await endsOf(username, shown, deps.audit);
  const items = await Promise.all(
    shown.map(async (launch): Promise<PastSession> => {
      const id = launch.sessionId;
      const check = await deps.lastSelfCheck(id);
      return {
        id,
        labId: launch.labId,
        startedAt: launch.at,
        endedAt: ends.get(id) ?? null,
        lastSelfCheck: check
          ? { checkedAt: check.checkedAt, score: check.result.score, maxScore: check.result.maxScore }
          : null,
      };
    }),
  );
  return { items };
}

/** When each of the launches ended: the first "end" recorded for it (a reaper may record one late). */
async function endsOf(
  username: string,
  launches: Launch[],
  audit: Pick<AuditLog, "list">,
): Promise<Map<string, string>> {
  const ends = new Map<string, string>();
  const oldest = launches.at(-1)?.at;
  if (oldest === undefined) return ends;
  const wanted = new Set(launches.map((launch) => launch.sessionId));
  const entries = await audit.list({ user: username, action: "end", since: oldest, limit: 500 });
  // Newest first: the last write for a session is its first end.
  for (const entry of entries.items) {
    if (entry.sessionId !== null && wanted.has(entry.sessionId)) ends.set(entry.sessionId, entry.at);
  }
  return ends;
}
