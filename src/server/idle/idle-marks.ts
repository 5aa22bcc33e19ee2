// What idle handling keeps on a session's VM, where every replica reads it (docs/operations.md, "Idle
// sessions"): the last activity seen (console input, or what the agent saw) and the warning or pause
// the idle pass decided. JSON patches over the VM's annotations, like an extension or a raised hand.
import type { SessionIdle } from "../../common/api.ts";
import type { ClusterClient, JsonPatchOperation } from "../kube/client.ts";
import { isPatchNotApplied, KubeStatusError } from "../kube/errors.ts";
import { annotationKeys, metadataPath } from "../sessions/labels.ts";

const lastActivePath = metadataPath("annotations", annotationKeys.lastActive);
const idlePath = metadataPath("annotations", annotationKeys.idle);

export type IdleCluster = Pick<ClusterClient, "patchVirtualMachine">;

/** Activity at `at`; clears a warning (`hadMark`), since the session is no longer idle. */
export function activityPatch(at: Date, hadMark: boolean): JsonPatchOperation[] {
  return [
    { op: "add", path: lastActivePath, value: at.toISOString() },
    ...(hadMark ? [{ op: "remove" as const, path: idlePath }] : []),
  ];
}

export function markPatch(mark: SessionIdle | undefined): JsonPatchOperation[] {
  return mark
    ? [{ op: "add", path: idlePath, value: JSON.stringify(mark) }]
    : [{ op: "remove", path: idlePath }];
}

/**
 * Applies a patch to a session's VM. A VM already gone (404) or whose mark another replica removed
 * first (422: remove of an absent key) needs nothing more: false then.
 */
export async function patchMarks(
  cluster: IdleCluster,
  sessionId: string,
  operations: JsonPatchOperation[],
): Promise<boolean> {
  try {
    await cluster.patchVirtualMachine(sessionId, operations);
    return true;
  } catch (error) {
    if (isPatchNotApplied(error) || (error instanceof KubeStatusError && error.statusCode === 404))
      return false;
    throw error;
  }
}

/** When the session last showed activity: the newest of its start and its last activity mark. */
export function idleSince(session: { createdAt: string }, lastActive: string | undefined): number {
  const started = Date.parse(session.createdAt);
  const active = lastActive === undefined ? Number.NaN : Date.parse(lastActive);
  return Math.max(Number.isNaN(started) ? 0 : started, Number.isNaN(active) ? 0 : active);
}
