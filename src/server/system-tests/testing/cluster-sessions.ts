// Sessions made and ended behind the BFF's back, the way kubectl or another replica would: for
// tests that check the BFF's view against the cluster's.
import type { Lab } from "../../../common/lab.ts";
import type { TestEmulator } from "../../../emulator/testing/start.ts";
import { createClusterClient, type ClusterClient } from "../../kube/client.ts";
import { KubeRequestCounter } from "../../kube/request-counter.ts";
import { sessionsSelector } from "../../sessions/labels.ts";
import { createSessionVm as createVmAndUserData } from "../../sessions/vm-creation.ts";
import { buildSessionObjects, newSessionId } from "../../sessions/vm-manifest.ts";
import type { VirtualMachine } from "../../kube/types.ts";
import { testNamespace, type TestBrowser } from "../../testing/test-bff.ts";

/** The emulator as its administrator sees it. */
export function adminCluster(emulator: TestEmulator): ClusterClient {
  return createClusterClient(emulator.kubeConfig, {
    namespace: testNamespace,
    labelSelector: sessionsSelector,
    counter: new KubeRequestCounter(),
  });
}

/** A session VM with its user data, as the BFF would launch it; returns its id. */
export async function createSessionVm(
  cluster: ClusterClient,
  lab: Lab,
  owner: string,
  options: {
    runStrategy?: VirtualMachine["spec"]["runStrategy"];
    agentUserData?: string;
    /** The owner's section, as a launch by someone in it would set. */
    section?: string;
  } = {},
): Promise<string> {
  const sessionId = newSessionId(lab.id);
  const objects = buildSessionObjects({
    sessionId,
    lab,
    owner,
    section: options.section,
    namespace: cluster.namespace,
    expiresAt: new Date(Date.now() + 3600_000),
    agentUserData: options.agentUserData,
  });
  if (options.runStrategy) objects.virtualMachine.spec.runStrategy = options.runStrategy;
  await createVmAndUserData(cluster, objects);
  return sessionId;
}

/** Every session a staff member sees, in the API's order (the whole list, one page). */
export async function allSessions(staff: TestBrowser): Promise<{ items: { id: string }[]; stale: boolean }> {
  const answer = await staff.get("/api/sessions?pageSize=1000");
  if (answer.status !== 200) throw new Error(`listing sessions answered ${answer.status}`);
  return answer.body;
}
