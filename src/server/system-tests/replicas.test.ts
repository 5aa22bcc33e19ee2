// Two BFF replicas as two processes, against one emulator (real guests, deploy/base's RBAC) and one
// PostgreSQL, coordinating through Leases as a Deployment with replicas: 2 would: both serve the
// same sessions, one reaps and one grades, and a grading run survives killing the replica running it.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GradingRun } from "../../common/grading-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { ScreenTestClient } from "../screen/testing/screen-client.ts";
import { consoleLeaseName } from "../replicas/console-ownership.ts";
import { reaperLeaseName } from "../replicas/coordination.ts";
import { gradingLeaseName } from "../replicas/grading-duty.ts";
import { replicaLeaseName } from "../replicas/membership.ts";
import {
  createTestSchema,
  startTestPostgres,
  type TestPostgres,
  type TestSchema,
} from "../db/postgres/testing/test-postgres.ts";
import { finishedGradingRun } from "../grading/testing/grading-runs.ts";
import { runInConsole } from "../grading/testing/guest-console.ts";
import { createLeaseClient, type LeaseClient } from "../kube/leases.ts";
import { startReplica, type Replica } from "../testing/replicas.ts";
import { patient, eventually } from "../../common/testing/patience.ts";
import { TestBrowser } from "../testing/test-bff.ts";

const leaseDurationSeconds = 2;
const labId = "replicas";
// The check is slow in the sessions that have ~/slow, so a run can be caught in the middle.
const labYaml = `
id: ${labId}
title: Replicas
description: Grading across replicas.
vm: { size: small, image: quay.io/containerdisks/fedora:41 }
session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: [serial, graphical] }
checks:
  - { id: slow, title: A slow check, points: 2, run: "if test -f ~/slow; then sleep 3; fi; test -d /tmp", timeoutSeconds: 20 }
`;

let emulator: TestEmulator;
let postgres: TestPostgres;
let schema: TestSchema;
let workDir: string;
let leases: LeaseClient;
const replicas = new Map<string, Replica>();
const consoleClients: ConsoleTestClient[] = [];
const screenClients: ScreenTestClient[] = [];
/** Each student's running session, launched before the tests. */
const sessions = { alice: "", bob: "" };

function untilConnected(client: ConsoleTestClient): Promise<void> {
  return client.until(() => client.lastMessage("status")?.state === "connected", "the console connected");
}

function itemOf(run: GradingRun, sessionId: string) {
  return run.items.find((item) => item.sessionId === sessionId);
}

function environment(name: string): Record<string, string> {
  return {
    LAB_KUBECONFIG: emulator.bffKubeconfigPath(),
    AUTH_MODE: "demo",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: path.join(workDir, name),
    LABS_DIR: path.join(workDir, "labs"),
    DATABASE_URL: schema.url,
    SESSION_SECRET: "a-session-secret-every-replica-shares-0123",
    AGENT_TOKEN_SECRET: "an-agent-token-secret-every-replica-shares",
    LAB_LEASE_DURATION_SECONDS: String(leaseDurationSeconds),
    POD_NAME: name,
    LOG_LEVEL: "warn",
  };
}

function replica(name: string): Replica {
  const found = replicas.get(name);
  if (!found) throw new Error(`no replica ${name}`);
  return found;
}

async function signIn(on: Replica, username: string): Promise<TestBrowser> {
  const browser = new TestBrowser(on.url);
  const answer = await browser.post("/api/auth/login", { username, password: "demo" });
  if (answer.status !== 200) throw new Error(`sign-in as ${username} failed: ${answer.status}`);
  return browser;
}

/** The output events of an asciicast recording, joined as a player would show them. */
function outputOf(cast: string): string {
  return cast
    .trimEnd()
    .split("\n")
    .slice(1)
    .map((line) => JSON.parse(line) as [number, string, string])
    .filter(([, kind]) => kind === "o")
    .map(([, , text]) => text)
    .join("");
}

async function holderOf(lease: string): Promise<string | undefined> {
  return (await leases.get(lease))?.holderIdentity || undefined;
}

async function launch(browser: TestBrowser): Promise<string> {
  const created = await browser.post("/api/sessions", { labId });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "replicas-test-"));
  const labsDir = path.join(workDir, "labs");
  await mkdir(labsDir);
  await writeFile(path.join(labsDir, `${labId}.yaml`), labYaml);
  [emulator, postgres] = await Promise.all([
    startTestEmulator({ guests: "sandbox", deployRbac: true }),
    startTestPostgres(),
  ]);
  schema = await createTestSchema(postgres);
  leases = createLeaseClient(emulator.kubeConfig, { namespace: "lab-console" });
  const started = await Promise.all(
    ["replica-a", "replica-b"].map((name) => startReplica(environment(name))),
  );
  replicas.set("replica-a", started[0]!);
  replicas.set("replica-b", started[1]!);
}, 60_000);

afterAll(async () => {
  for (const client of [...consoleClients, ...screenClients]) client.close();
  await Promise.all([...replicas.values()].map((each) => each.kill()));
  await schema?.drop();
  await postgres?.close();
  await emulator?.close();
  await rm(workDir, { recursive: true, force: true });
});

describe("two replicas", () => {
  it("announce themselves and share the duties: one reaps, one grades", async () => {
    for (const each of replicas.values()) {
      const announced = await eventually(
        () => leases.get(replicaLeaseName(each.identity)),
        (lease) => lease !== undefined,
        { what: `${each.identity}'s replica lease` },
      );
      expect(announced).toMatchObject({
        holderIdentity: each.identity,
        annotations: { "labconsole.dev/endpoint": each.url },
      });
    }
    const identities = [...replicas.values()].map((each) => each.identity);
    const reaper = await eventually(
      () => holderOf(reaperLeaseName),
      (holder) => holder !== undefined,
      {
        what: "a reaper",
      },
    );
    const grader = await eventually(
      () => holderOf(gradingLeaseName),
      (holder) => holder !== undefined,
      {
        what: "a grading worker",
      },
    );
    expect(identities).toContain(reaper);
    expect(identities).toContain(grader);
  });

  it("serve the same sessions: launched on one, seen and ended on the other", async () => {
    const aliceOnA = await signIn(replica("replica-a"), "alice");
    const aliceOnB = await signIn(replica("replica-b"), "alice");
    const taraOnB = await signIn(replica("replica-b"), "tara");
    const id = await launch(aliceOnA);
    await eventually(
      () => aliceOnB.get(`/api/sessions/${id}`),
      (answer) => answer.body?.status === "running",
      { what: "the session running, seen through the other replica" },
    );
    const staffView = await taraOnB.get("/api/sessions");
    expect(staffView.body.items.map((session: { id: string }) => session.id)).toContain(id);
    // The quota counts sessions on the cluster, whichever replica launched them.
    expect((await aliceOnB.post("/api/sessions", { labId })).status).toBe(409);
    expect((await aliceOnB.delete(`/api/sessions/${id}`)).status).toBe(202);
    await eventually(
      () => aliceOnA.get(`/api/sessions/${id}`),
      (answer) => answer.status === 404,
      { what: "the session gone, seen through the first replica" },
    );
  });
});

describe("sign-ins across two replicas", () => {
  it("hold on either replica, and end on both when signed out on one", async () => {
    const ivanOnA = await signIn(replica("replica-a"), "ivan");
    const ivanOnB = ivanOnA.copy(replica("replica-b").url);
    expect((await ivanOnB.get("/api/me")).body).toEqual({
      username: "ivan",
      role: "instructor",
      sections: [],
    });
    const stolenOnB = ivanOnA.copy(replica("replica-b").url);

    expect((await ivanOnA.post("/api/auth/logout")).status).toBe(204);
    const signedOutAt = performance.now();
    await eventually(
      () => stolenOnB.get("/api/me"),
      (answer) => answer.status === 401,
      { timeoutMs: 5000, what: "the other replica to refuse the signed-out cookie" },
    );
    const delayMs = performance.now() - signedOutAt;
    console.log(`sign-out refused by the other replica after ${Math.round(delayMs)} ms (poll every 2 s)`);
    expect(delayMs).toBeLessThan(patient(3000));
  });
});

describe("grading across two replicas", () => {
  beforeAll(async () => {
    const [alice, bob] = await Promise.all(
      ["alice", "bob"].map((name) => signIn(replica("replica-a"), name)),
    );
    [sessions.alice, sessions.bob] = await Promise.all([launch(alice!), launch(bob!)]);
    await eventually(
      () => alice!.get("/api/sessions"),
      (answer) => answer.body?.items?.[0]?.status === "running",
      { what: "alice's session running" },
    );
    await eventually(
      () => bob!.get("/api/sessions"),
      (answer) => answer.body?.items?.[0]?.status === "running",
      { what: "bob's session running" },
    );
    await runInConsole(
      { kubeConfig: emulator.kubeConfig, namespace: "lab-sessions", vmiName: sessions.bob },
      "touch ~/slow",
    );
  });

  it("hold one console connection per VM, whichever replica each browser reaches", async () => {
    const worker = await holderOf(gradingLeaseName);
    const holder = [...replicas.values()].find((each) => each.identity === worker)!;
    const other = [...replicas.values()].find((each) => each.identity !== worker)!;
    const owner = await ConsoleTestClient.connect(holder.url, sessions.alice, {
      cookie: await signInCookie(holder.url, "alice"),
    });
    consoleClients.push(owner);
    await untilConnected(owner);
    // The TA reaches the other replica, which hands the browser over to the holder.
    const observer = await ConsoleTestClient.connect(other.url, sessions.alice, {
      cookie: await signInCookie(other.url, "tara"),
      mode: "observe",
    });
    consoleClients.push(observer);
    await untilConnected(observer);
    owner.type("echo both-$((6*7))-see-this\r");
    await owner.untilScreenShows("both-42-see-this");
    await observer.untilScreenShows("both-42-see-this");

    const [onHolder, onOther] = await Promise.all([holder.stats(), other.stats()]);
    expect(onHolder.consoles).toEqual({ consoles: 1, connectedUpstreams: 1, viewers: 2 });
    expect(onOther.consoles).toEqual({ consoles: 0, connectedUpstreams: 0, viewers: 0 });
    expect((await leases.get(consoleLeaseName(sessions.alice)))?.holderIdentity).toBe(holder.identity);

    // The holder records the console into PostgreSQL: the other replica lists and serves it too.
    const staffOnOther = await signIn(other, "tara");
    await eventually(
      () => staffOnOther.get(`/api/sessions/${sessions.alice}/recording`),
      (answer) => answer.status === 200 && outputOf(String(answer.body)).includes("both-42-see-this"),
      { what: "the other replica to serve the recording" },
    );
    const listed = await staffOnOther.get("/api/recordings?student=alice");
    expect(listed.body.items).toEqual([
      expect.objectContaining({ sessionId: sessions.alice, owner: "alice", labId }),
    ]);
  });

  it("hold one screen connection per VM too, a browser on the other replica handed over to the holder", async () => {
    const holding = (await leases.get(consoleLeaseName(sessions.alice)))?.holderIdentity;
    const holder = [...replicas.values()].find((each) => each.identity === holding)!;
    const other = [...replicas.values()].find((each) => each.identity !== holding)!;
    const owner = await ScreenTestClient.connect(holder.url, sessions.alice, {
      cookie: await signInCookie(holder.url, "alice"),
    });
    screenClients.push(owner);
    const observer = await ScreenTestClient.connect(other.url, sessions.alice, {
      cookie: await signInCookie(other.url, "tara"),
      mode: "observe",
    });
    screenClients.push(observer);
    await observer.untilScreenShows(":~$", 40_000);
    owner.type("across-replicas");
    await observer.untilScreenShows("across-replicas");
    const [onHolder, onOther] = await Promise.all([holder.stats(), other.stats()]);
    // The serial console from the test before, and the screen: one line each, both on the holder.
    expect(onHolder.consoles.connectedUpstreams).toBe(2);
    expect(onOther.consoles).toEqual({ consoles: 0, connectedUpstreams: 0, viewers: 0 });
  });

  it("grade a run on the worker, whichever replica it was started on", async () => {
    const worker = await holderOf(gradingLeaseName);
    const other = [...replicas.values()].find((each) => each.identity !== worker)!;
    const ivan = await signIn(other, "ivan");
    const started = await ivan.post(`/api/labs/${labId}/grading-runs`, { sessionIds: [sessions.alice] });
    expect(started.status).toBe(201);
    const finished = await finishedGradingRun(ivan, started.body.id as string);
    expect(finished).toMatchObject({ status: "completed", progress: { total: 1, done: 1, ungradable: 0 } });
  });

  it("finish a grading run when the replica grading it is killed in the middle", async () => {
    const worker = await holderOf(gradingLeaseName);
    const doomed = [...replicas.values()].find((each) => each.identity === worker)!;
    const survivor = [...replicas.values()].find((each) => each.identity !== worker)!;
    const [ivanOnDoomed, ivanOnSurvivor] = await Promise.all([
      signIn(doomed, "ivan"),
      signIn(survivor, "ivan"),
    ]);
    const started = await ivanOnDoomed.post(`/api/labs/${labId}/grading-runs`, {});
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    // Caught in the middle: alice's result recorded, bob's slow check still being asked.
    const during = await eventually(
      () => ivanOnDoomed.get(`/api/grading-runs/${runId}`),
      (answer) =>
        itemOf(answer.body, sessions.alice)?.state === "done" &&
        itemOf(answer.body, sessions.bob)?.state === "grading",
      { what: "alice graded while bob's check runs" },
    );
    const aliceResult = itemOf(during.body, sessions.alice)?.result;

    const killedAt = performance.now();
    await doomed.kill();
    replicas.delete(doomed === replicas.get("replica-a") ? "replica-a" : "replica-b");
    // The console moves too: the forwarded observer is cut, and alice reconnects to the survivor,
    // which takes the console over once the dead holder's replica lease ran out.
    let consoleBackMs = 0;
    const consoleBack = (async () => {
      await consoleClients[1]!.untilClosed();
      const cookie = await signInCookie(survivor.url, "alice");
      const client = await eventually(
        () => ConsoleTestClient.connect(survivor.url, sessions.alice, { cookie }).catch(() => undefined),
        (each) => each !== undefined,
        { timeoutMs: 10_000, what: "the console to open on the survivor" },
      );
      consoleClients.push(client!);
      await untilConnected(client!);
      consoleBackMs = performance.now() - killedAt;
      return client!;
    })();
    await eventually(
      () => holderOf(gradingLeaseName),
      (holder) => holder === survivor.identity,
      { timeoutMs: 10_000, what: "the survivor to take grading over" },
    );
    const handoverMs = performance.now() - killedAt;
    console.log(
      `grading lease handover after SIGKILL: ${Math.round(handoverMs)} ms (lease ${leaseDurationSeconds} s)`,
    );
    expect(handoverMs).toBeLessThan(leaseDurationSeconds * 1000 + patient(leaseDurationSeconds * 1000));

    const finished = await finishedGradingRun(ivanOnSurvivor, runId);
    expect(finished.status).toBe("completed");
    expect(finished.progress).toEqual({ total: 2, done: 2, ungradable: 0 });
    // Recorded once: alice's result is the one from before the kill; bob's was graded again.
    expect(itemOf(finished, sessions.alice)?.result).toEqual(aliceResult);
    expect(itemOf(finished, sessions.bob)?.result).toMatchObject({ gradable: true, score: 2 });
    const reopened = await consoleBack;
    console.log(`console back on the survivor after SIGKILL: ${Math.round(consoleBackMs)} ms`);
    reopened.type("echo moved-$((6*7))\r");
    await reopened.untilScreenShows("moved-42");
    expect((await survivor.stats()).consoles).toMatchObject({ consoles: 1, connectedUpstreams: 1 });
    expect((await leases.get(consoleLeaseName(sessions.alice)))?.holderIdentity).toBe(survivor.identity);
    // The reaper's duty is the survivor's too, whoever held it.
    await eventually(
      () => holderOf(reaperLeaseName),
      (holder) => holder === survivor.identity,
      { timeoutMs: 10_000, what: "the survivor to reap" },
    );
  });
});
