// Per-session throttles (the security review's L4): each of these actions writes to the cluster or
// the audit log, so one student clicking or scripting in a loop must not turn into a write storm.
// Over real sockets, against the emulator, under deploy/base's RBAC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { aLab } from "./testing/fixtures.ts";

let emulator: TestEmulator;
let bff: TestBff;
let alice: TestBrowser;
let sessionId: string;
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [aLab({ id: "lab-throttled" })], emulator });
  alice = await bff.signIn("alice");
  sessionId = await launchRunning(alice, "lab-throttled");
});

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

describe("actions on one session", () => {
  it("throttles raising and lowering a hand, with Retry-After, and leaves the TA's answer alone", async () => {
    const statuses: number[] = [];
    for (let round = 0; round < 6; round += 1) {
      statuses.push((await alice.post(`/api/sessions/${sessionId}/help`, { note: "stuck" })).status);
      statuses.push((await alice.delete(`/api/sessions/${sessionId}/help`)).status);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    const refused = await alice.post(`/api/sessions/${sessionId}/help`, { note: "stuck" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    // Another person's allowance is their own.
    const tara = await bff.signIn("tara");
    expect((await tara.post(`/api/sessions/${sessionId}/help/acknowledge`)).status).not.toBe(429);
  });

  it("throttles restarts of one VM", async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      statuses.push((await alice.post(`/api/sessions/${sessionId}/restart`)).status);
    }
    expect(statuses.slice(0, 3).every((status) => status === 202 || status === 409)).toBe(true);
    expect(statuses[3]).toBe(429);
  });

  it("throttles console attaches and caps the sockets one person holds on one console", async () => {
    const cookie = await signInCookie(bff.url, "alice");
    const limits = bff.app.consoleHub.limits;
    for (let index = 0; index < limits.socketsPerPerson; index += 1) {
      clients.push(await ConsoleTestClient.connect(bff.url, sessionId, { cookie, mode: "observe" }));
    }
    expect(await endedAtOnce(cookie, "observe")).toBe(
      "This console is open in too many of your windows. Close one, then reload this page.",
    );
    for (const client of clients.splice(0)) client.close();
    await eventually(
      async () => bff.app.consoleHub.stats().viewers,
      (viewers) => viewers === 0,
      { what: "the closed windows to be gone" },
    );

    // Attaching and detaching in a loop: past the burst the socket only says why, before any audit row.
    const reasons: (string | undefined)[] = [];
    for (let index = 0; index < limits.attachBurst; index += 1) reasons.push(await endedAtOnce(cookie));
    expect(reasons.filter((reason) => reason === undefined).length).toBeLessThan(limits.attachBurst);
    expect(await endedAtOnce(cookie)).toMatch(
      /^This console was reopened too often\. Reload this page in \d+ s\.$/,
    );

    // Someone else still gets in.
    const tara = await ConsoleTestClient.connect(bff.url, sessionId, {
      cookie: await signInCookie(bff.url, "tara"),
      mode: "observe",
    });
    clients.push(tara);
    await tara.until(() => tara.lastMessage("replay-end") !== undefined, "the replay");
  });

  it("holds the socket cap against upgrades sent at once", async () => {
    const cookie = await signInCookie(bff.url, "ivan");
    const limits = bff.app.consoleHub.limits;
    const reasons = await Promise.all(
      Array.from({ length: limits.attachBurst }, () => endedAtOnce(cookie, "observe", { keepOpen: true })),
    );
    expect(reasons.filter((reason) => reason === undefined)).toHaveLength(limits.socketsPerPerson);
  });
});

/**
 * Opens a console: the reason when the BFF ended it at once, undefined when it became a console
 * (closed again unless keepOpen).
 */
async function endedAtOnce(
  cookie: string,
  mode?: "observe",
  { keepOpen = false } = {},
): Promise<string | undefined> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, { cookie, mode });
  await client.until(
    () => client.lastMessage("ended") !== undefined || client.lastMessage("replay-end") !== undefined,
    "a console or its refusal",
  );
  const reason = client.lastMessage("ended")?.reason;
  if (reason !== undefined || !keepOpen) client.close();
  else clients.push(client);
  return reason;
}
