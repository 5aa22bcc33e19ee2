// Restarting a session's VM over real sockets: the BFF calls KubeVirt's restart subresource (as the
// deployed service account, under deploy/base's RBAC), the emulator replaces the VMI, and browsers
// already watching the console stay attached and see the new guest. The audit log says who restarted it.
// Two restarts at once get one VM restart and, for the second, the same plain "already stopping or
// starting" whichever way the cluster refuses it (virt-api's 500 "stop/start already underway").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../common/operations-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { adminCluster } from "../system-tests/testing/cluster-sessions.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { aLab } from "./testing/fixtures.ts";

let emulator: TestEmulator;
const metricsToken = "a-metrics-token-for-restart-tests";
let bff: TestBff;
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  // A guest takes a second to shut down: two restarts sent at once find the first under way even
  // when one reuses a kept connection and the other opens a new one (tens of ms on a busy machine).
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true, timings: { toStopped: 1000 } });
  bff = await startTestBff({
    labs: [aLab({ id: "lab-restart", title: "Restartable" })],
    emulator,
    consoleLimits: { reconnectInitialMs: 50, notRunningRetryMs: 100 },
    metricsToken,
  });
});

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function vmiUid(sessionId: string): Promise<string | undefined> {
  const { items } = await adminCluster(emulator).virtualMachineInstances.list();
  return items.find((vmi) => vmi.metadata.name === sessionId)?.metadata.uid;
}

/** lab_console_console_upstream_reconnects_total as /metrics shows it (absent until the first). */
async function upstreamReconnects(): Promise<number> {
  const answer = await fetch(`${bff.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  const line = /^lab_console_console_upstream_reconnects_total (\d+)$/m.exec(await answer.text());
  return Number(line?.[1] ?? 0);
}

async function restartsInAuditLog(sessionId: string): Promise<AuditEntry[]> {
  const answer = await (await bff.signIn("ivan")).get(`/api/audit?action=restart&session=${sessionId}`);
  expect(answer.status).toBe(200);
  return answer.body.items as AuditEntry[];
}

async function openConsole(sessionId: string, who: string, mode?: "observe"): Promise<ConsoleTestClient> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, who),
    mode,
  });
  clients.push(client);
  await client.untilLive();
  return client;
}

describe("restarting a session's VM", () => {
  let alice: TestBrowser;
  let sessionId: string;

  beforeAll(async () => {
    alice = await bff.signIn("alice");
    sessionId = await launchRunning(alice, "lab-restart");
  });

  it("keeps the owner and an observer attached through the new VMI", async () => {
    const owner = await openConsole(sessionId, "alice");
    const observer = await openConsole(sessionId, "tara", "observe");
    owner.type("export MARK=before''restart; echo mark-$MARK\r");
    await observer.untilScreenShows("mark-beforerestart");
    const firstUid = await vmiUid(sessionId);
    expect(await upstreamReconnects()).toBe(0);

    const restarted = await alice.post(`/api/sessions/${sessionId}/restart`);
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(202);
    expect(await restartsInAuditLog(sessionId)).toEqual([
      expect.objectContaining({
        actor: "alice",
        actorRole: "student",
        sessionId,
        labId: "lab-restart",
        owner: "alice",
        ip: "127.0.0.1",
      }),
    ]);
    await eventually(
      () => vmiUid(sessionId),
      (uid) => uid !== undefined && uid !== firstUid,
      { what: "a new VMI", timeoutMs: 20_000 },
    );
    await owner.until(
      () => owner.messages.some((message) => message.type === "status" && message.state !== "connected"),
      "the console noticing the old VMI went",
      20_000,
    );
    await owner.until(() => owner.lastMessage("status")?.state === "connected", "reconnected", 20_000);
    // Following the VM to its new VMI is a reconnect (more than one if the old VMI lingered).
    expect(await upstreamReconnects()).toBeGreaterThanOrEqual(1);

    // The new guest's shell has no MARK: the variable was set in the old one.
    owner.type("echo after-[$MARK]-restart\r");
    await observer.untilScreenShows("after-[]-restart", 20_000);
    await owner.untilScreenShows("after-[]-restart");
    expect(owner.closedWith).toBeUndefined();
    expect(observer.closedWith).toBeUndefined();
  });

  it("is refused for someone else's session and for a VM that is not running", async () => {
    const bob = await bff.signIn("bob");
    expect((await bob.post(`/api/sessions/${sessionId}/restart`)).status).toBe(404);
    const ended = await alice.delete(`/api/sessions/${sessionId}`);
    expect(ended.status).toBe(202);
    const refused = await alice.post(`/api/sessions/${sessionId}/restart`);
    expect([404, 409]).toContain(refused.status);
    // Only the restart that happened is in the log.
    expect(await restartsInAuditLog(sessionId)).toHaveLength(1);
  });
});

describe("two restarts at once", () => {
  it("restarts the VM once and tells the second caller it is already stopping or starting", async () => {
    const bob = await bff.signIn("bob");
    const sessionId = await launchRunning(bob, "lab-restart");
    const tara = await bff.signIn("tara");
    // A slow API server: both requests have seen the session running before either restart lands,
    // as with two staff members, two replicas or a stale cache.
    emulator.emulator.faults.delayResponses({ ms: 300 });
    const answers = await Promise.all([
      bob.post(`/api/sessions/${sessionId}/restart`),
      tara.post(`/api/sessions/${sessionId}/restart`),
    ]).finally(() => emulator.emulator.faults.reset());
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    const refused = answers.find((answer) => answer.status === 409);
    expect(refused?.body).toEqual({
      error: {
        code: "conflict",
        reason: "restart_in_progress",
        message: "The VM is already stopping or starting. Try again in a moment.",
      },
    });
    expect(await restartsInAuditLog(sessionId)).toHaveLength(1);
  });
});
