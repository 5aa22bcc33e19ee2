// Test helper: which VMI runs a session's VM now, and waiting for KubeVirt to run a new one in its
// place (a Restart, a guest's poweroff, a crash), as the session's student sees it.
import { eventually } from "../../../common/testing/patience.ts";
import type { TestEmulator } from "../../../emulator/testing/start.ts";
import { jsonRequest } from "../../../emulator/testing/raw-request.ts";
import { testNamespace, type TestBrowser } from "../../testing/test-bff.ts";

/** The uid of the session's VMI while it is Running; undefined otherwise. */
export async function runningVmiUid(emulator: TestEmulator, sessionId: string): Promise<string | undefined> {
  const path = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachineinstances/${sessionId}`;
  const answer = await jsonRequest(emulator.emulator, "GET", path);
  const vmi = answer.json as { metadata?: { uid?: string }; status?: { phase?: string } };
  return answer.status === 200 && vmi.status?.phase === "Running" ? vmi.metadata?.uid : undefined;
}

/** Resolves once a VMI other than `before` runs and the student's session says running again. */
export async function untilNewVmiRuns(
  emulator: TestEmulator,
  student: TestBrowser,
  sessionId: string,
  before: string | undefined,
  timeoutMs: number,
): Promise<void> {
  await eventually(
    async () => ({
      uid: await runningVmiUid(emulator, sessionId),
      session: (await student.get(`/api/sessions/${sessionId}`)).body,
    }),
    ({ uid, session }) => uid !== undefined && uid !== before && session.status === "running",
    { timeoutMs, what: "a new VMI running" },
  );
}
