// The grading service against real agents on loopback and a real SQLite file: self-checks, runs,
// a VM lost mid-run, a restart mid-run, and a locked database.
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import type { GradingRun } from "../../common/grading-api.ts";
import { eventually } from "../../common/testing/patience.ts";
import type { SessionResult } from "../../common/grading.ts";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { createAgentClient, type ConnectToAgent } from "../agent/client.ts";
import { gradingDatabaseName } from "./grading-database.ts";
import { createPortForwardTransport, notListeningReasons } from "../agent/portforward-transport.ts";
import { DomainError } from "../errors/domain-error.ts";
import { GradingService, type GradingServiceDeps } from "./service.ts";
import { SqliteGradingRepository } from "./sqlite-repository.ts";
import { startFakeAgent, type CapturingServer } from "../agent/testing/fake-agent.ts";
import { aCheck, aGradingLab, aSession, FixedSessions } from "./testing/grading-fixtures.ts";
import { startLoopbackAgents, type LoopbackAgents } from "../agent/testing/loopback-agents.ts";

/** Who reads runs and grades here: an instructor, who sees every section's. */
const instructor: Me = { username: "ivan", role: "instructor", sections: [] };

const alice = "linux-basics-alice001";
const bob = "linux-basics-bob00001";
const carol = "linux-basics-carol001";
const dave = "linux-basics-dave0001";

// The first check appends to ~/asked, so a test can count how often the agent really ran it, and
// waits while ~/hold exists, so a test can catch a session in the middle of being graded.
const lab = aGradingLab([
  aCheck({
    id: "hello-file",
    title: "Create ~/hello.txt containing hello",
    points: 2,
    selfCheck: true,
    run: "echo . >> ~/asked; while test -f ~/hold; do sleep 0.02; done; grep -q hello ~/hello.txt",
    hint: "Use echo and a redirect.",
  }),
  aCheck({
    id: "notes-dir",
    title: "Create ~/notes",
    selfCheck: true,
    run: "test -d ~/notes",
    hint: "mkdir.",
  }),
  aCheck({
    id: "report",
    title: "Write the report",
    points: 4,
    run: "cat ~/fraction 2>/dev/null || echo score=0",
  }),
]);

let agents: LoopbackAgents;
let dir: string;
let sessions: FixedSessions;
let clock: number;
const open: { service: GradingService; repository: SqliteGradingRepository }[] = [];

beforeAll(async () => {
  agents = await startLoopbackAgents([alice, bob, carol, dave]);
});
afterAll(() => agents.close());

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "grading-service-"));
  clock = Date.parse("2030-01-01T10:00:00.000Z");
  sessions = new FixedSessions([
    aSession({ id: alice, owner: "alice" }),
    aSession({ id: bob, owner: "bob" }),
    aSession({ id: carol, owner: "carol" }),
  ]);
  for (const id of [alice, bob, carol, dave]) {
    await agents.start(id);
    await rm(agents.home(id), { recursive: true, force: true });
    await mkdir(agents.home(id));
    // The checks run as "nobody" when the tests run as root; mkdir's mode is cut by the umask.
    await chmod(agents.home(id), 0o777);
  }
  // alice did everything, bob half of it, carol nothing.
  await work(alice, { "hello.txt": "hello\n", fraction: "score=1\n" }, ["notes"]);
  await work(bob, { "hello.txt": "goodbye\n", fraction: "score=0.5\n" }, ["notes"]);
});

afterEach(async () => {
  for (const { service, repository } of open.splice(0)) {
    await service.close();
    await repository.close();
  }
  await rm(dir, { recursive: true, force: true });
});

async function work(sessionId: string, files: Record<string, string>, dirs: string[] = []): Promise<void> {
  const home = agents.home(sessionId);
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(home, name), content);
  for (const name of dirs) await mkdir(path.join(home, name));
}

function timesAsked(sessionId: string): number {
  const file = path.join(agents.home(sessionId), "asked");
  return existsSync(file) ? readFileSync(file, "utf8").length / 2 : 0;
}

function startService(overrides: Partial<GradingServiceDeps> = {}) {
  const repository = SqliteGradingRepository.open(dir, { busyTimeoutMs: 20 });
  let runs = 0;
  const service = new GradingService({
    repository,
    sessions,
    labs: [lab],
    agents: createAgentClient({ connect: agents.connect, keyFor: agents.keyFor }),
    now: () => new Date(clock),
    newRunId: () => `run-${++runs}-${Math.random().toString(36).slice(2, 6)}`,
    retryDelayMs: 20,
    ...overrides,
  });
  open.push({ service, repository });
  return { service, repository };
}

const scores = (run: GradingRun) =>
  Object.fromEntries(
    run.items.map((item) => [item.owner, item.result?.gradable ? item.result.score : item.result?.reason]),
  );

describe("self-checks", () => {
  it("runs only the self-check checks and keeps each outcome in the history", async () => {
    const { service } = startService();
    const passed = await service.selfCheck(aSession({ id: alice, owner: "alice" }));
    expect(passed.result).toMatchObject({ gradable: true, score: 3, maxScore: 3 });
    expect(passed.result.checks.map((check) => check.checkId)).toEqual(["hello-file", "notes-dir"]);

    const failed = await service.selfCheck(aSession({ id: bob, owner: "bob" }));
    expect(failed.result).toMatchObject({ gradable: true, score: 1, maxScore: 3 });
    expect(failed.result.checks[0]).toMatchObject({
      passed: false,
      points: 0,
      message: "Exited with code 1. Hint: Use echo and a redirect.",
    });

    clock += 60_000;
    await work(bob, { "hello.txt": "hello\n" });
    await service.selfCheck(aSession({ id: bob, owner: "bob" }));
    const history = await service.selfCheckHistory(bob);
    expect(history.items.map((check) => check.result.score)).toEqual([3, 1]);
    expect(history.items[0]).toMatchObject({ sessionId: bob, owner: "bob", labId: lab.id });
  });

  it("lets a session check once per interval and says when to come back", async () => {
    const { service } = startService({ selfCheckIntervalMs: 10_000 });
    await service.selfCheck(aSession({ id: alice, owner: "alice" }));
    clock += 3_500;
    const tooSoon = await service
      .selfCheck(aSession({ id: alice, owner: "alice" }))
      .catch((error: unknown) => error);
    // The 429 and its Retry-After are the error map's (routes.test.ts asserts them on the wire).
    expect(tooSoon).toBeInstanceOf(DomainError);
    expect(tooSoon).toMatchObject({ kind: "too_soon", reason: "self_check_too_soon", retryAfterSeconds: 7 });
    expect((tooSoon as Error).message).toBe("You checked this session moments ago. Try again in 7 s.");
    // Another session is not held back, and the first may go again once the interval is over.
    await service.selfCheck(aSession({ id: bob, owner: "bob" }));
    clock += 6_500;
    await service.selfCheck(aSession({ id: alice, owner: "alice" }));
    expect((await service.selfCheckHistory(alice)).items).toHaveLength(2);
  });

  it("records a VM that is not running as ungradable, without asking its agent", async () => {
    const { service } = startService();
    const check = await service.selfCheck(
      aSession({ id: carol, owner: "carol", status: "starting", phase: "Scheduled" }),
    );
    expect(check.result).toEqual({
      sessionId: carol,
      labId: lab.id,
      owner: "carol",
      maxScore: 3,
      gradedAt: "2030-01-01T10:00:00.000Z",
      gradable: false,
      reason: "The VM is still starting; there is nothing to check yet.",
      score: null,
      checks: [],
    });
    expect(timesAsked(carol)).toBe(0);
  });

  it("answers database_unavailable when the database is locked", async () => {
    const { service } = startService();
    const other = new Database(path.join(dir, gradingDatabaseName));
    other.exec("BEGIN IMMEDIATE");
    try {
      const failure = service.selfCheck(aSession({ id: alice, owner: "alice" }));
      await expect(failure).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await expect(failure).rejects.toThrow(/is locked by another program\. Try again in a moment\./);
      await expect(service.startRun(lab.id, "ivan")).rejects.toMatchObject({ code: "database_unavailable" });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(await service.listRuns(lab.id, instructor)).toEqual([]);
  });
});

describe("grading runs", () => {
  it("grades every running session: full marks, partial credit and failures", async () => {
    sessions.sessions.push(aSession({ id: dave, owner: "dave", status: "stopping" }));
    const { service } = startService();
    const started = await service.startRun(lab.id, "ivan");
    expect(started).toMatchObject({
      labId: lab.id,
      startedBy: "ivan",
      status: "running",
      selectedSessionIds: null,
    });
    expect(started.items.map((item) => item.owner)).toEqual(["alice", "bob", "carol"]);

    await service.settled(started.id);
    const run = await service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "completed", progress: { total: 3, done: 3, ungradable: 0 } });
    expect(scores(run)).toEqual({ alice: 7, bob: 3, carol: 0 });
    const bobReport = run.items[1]?.result?.checks.find((check) => check.checkId === "report");
    expect(bobReport).toMatchObject({
      points: 2,
      maxPoints: 4,
      passed: false,
      message: "Partial credit: 50%.",
    });
    expect(run.items.every((item) => item.state === "done")).toBe(true);
  });

  it("grades only the selected sessions, and calls one that is not running ungradable", async () => {
    sessions.sessions.push(
      aSession({ id: dave, owner: "dave", status: "failed", message: "The image could not be pulled." }),
    );
    const { service } = startService();
    const started = await service.startRun(lab.id, "ivan", [bob, dave, bob]);
    expect(started.selectedSessionIds).toEqual([bob, dave]);
    await service.settled(started.id);
    expect(scores(await service.getRun(started.id, instructor))).toEqual({
      bob: 3,
      dave: "The VM failed: The image could not be pulled.",
    });
    expect(timesAsked(dave)).toBe(0);
  });

  it("refuses runs that make no sense", async () => {
    const { service } = startService();
    await expect(service.startRun("no-such-lab", "ivan")).rejects.toMatchObject({ kind: "not_found" });
    await expect(service.startRun(lab.id, "ivan", [alice, "linux-basics-zzzz"])).rejects.toMatchObject({
      kind: "invalid",
      message: 'These are not sessions of "Linux basics": linux-basics-zzzz.',
    });
    sessions.sessions = [aSession({ id: alice, owner: "alice", status: "starting" })];
    await expect(service.startRun(lab.id, "ivan")).rejects.toMatchObject({
      kind: "conflict",
      message: 'No session of "Linux basics" is running, so there is nothing to grade.',
    });
    expect(await service.listRuns(lab.id, instructor)).toEqual([]);
  });

  it("refuses a second run of the same lab while one is going", async () => {
    await writeFile(path.join(agents.home(alice), "hold"), "");
    const { service } = startService();
    const first = await service.startRun(lab.id, "ivan");
    await expect(service.startRun(lab.id, "ivan")).rejects.toMatchObject({ kind: "conflict" });
    await rm(path.join(agents.home(alice), "hold"));
    await agents.stop(alice);
    await service.settled(first.id);
  });

  it("marks the session whose VM is deleted mid-run ungradable, grades the rest, and re-runs the ones that fell short", async () => {
    // carol's check hangs until her VM goes away.
    await writeFile(path.join(agents.home(carol), "hold"), "");
    const { service } = startService();
    const started = await service.startRun(lab.id, "ivan");

    await eventually(
      async () => timesAsked(carol),
      (asked) => asked === 1,
      { what: "carol's check to start", timeoutMs: 15_000 },
    );
    const during = await service.getRun(started.id, instructor);
    expect(during.items.find((item) => item.owner === "carol")?.state).toBe("grading");
    sessions.remove(carol);
    await agents.stop(carol);

    await service.settled(started.id);
    const run = await service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "completed", progress: { total: 3, done: 3, ungradable: 1 } });
    expect(scores(run)).toEqual({
      alice: 7,
      bob: 3,
      carol:
        "The connection to the grading agent broke before it answered (the VM or its agent may have stopped).",
    });

    // carol's VM is back and bob fixed his file: the re-run grades just those two.
    await agents.start(carol);
    await rm(path.join(agents.home(carol), "hold"));
    sessions.sessions.push(aSession({ id: carol, owner: "carol" }));
    await work(bob, { "hello.txt": "hello\n" });
    const rerun = await service.rerun(started.id, "ivan");
    expect(rerun).toMatchObject({ rerunOf: started.id, selectedSessionIds: [bob, carol] });
    await service.settled(rerun.id);
    expect(scores(await service.getRun(rerun.id, instructor))).toEqual({ bob: 5, carol: 0 });
    expect(timesAsked(alice)).toBe(1);

    const csv = await service.gradesCsv(lab.id, instructor);
    expect(csv.split("\r\n")).toEqual([
      "student,lab,score,max,hello-file (max 2),notes-dir (max 1),report (max 4),graded at,run id",
      `alice,linux-basics,7,7,2,1,4,2030-01-01T10:00:00.000Z,${started.id}`,
      `bob,linux-basics,5,7,2,1,2,2030-01-01T10:00:00.000Z,${rerun.id}`,
      `carol,linux-basics,0,7,0,0,0,2030-01-01T10:00:00.000Z,${rerun.id}`,
      "",
    ]);
    const json = await service.gradesJson(lab.id, instructor);
    expect(json.students.map((student) => [student.student, student.runId])).toEqual([
      ["alice", started.id],
      ["bob", rerun.id],
      ["carol", rerun.id],
    ]);
  });

  it("refuses to re-run a run that is still going or had nothing to fix", async () => {
    const { service } = startService();
    const started = await service.startRun(lab.id, "ivan", [alice]);
    await service.settled(started.id);
    await expect(service.rerun(started.id, "ivan")).rejects.toMatchObject({
      kind: "conflict",
      message: "Every session in this run was graded with full marks; nothing to re-run.",
    });
    await expect(service.rerun("run-unknown", "ivan")).rejects.toMatchObject({ kind: "not_found" });
  });

  it("survives a restart mid-run: nothing recorded is lost or graded twice, the rest is graded after", async () => {
    // carol's check hangs, so the restart catches her in the middle.
    await writeFile(path.join(agents.home(carol), "hold"), "");
    const first = startService({ concurrency: 1 });
    const started = await first.service.startRun(lab.id, "ivan");
    await eventually(
      async () => timesAsked(carol),
      (asked) => asked === 1,
      { what: "carol's check to start", timeoutMs: 15_000 },
    );
    const before = await first.service.getRun(started.id, instructor);
    expect(before.items.map((item) => item.state)).toEqual(["done", "done", "grading"]);

    // The console stops: carol's answer is abandoned and her item stays pending.
    await first.service.close();
    await first.repository.close();
    await rm(path.join(agents.home(carol), "hold"));
    clock += 60_000;

    const second = startService({ concurrency: 1 });
    const stored = await second.service.getRun(started.id, instructor);
    expect(stored.status).toBe("running");
    expect(stored.items.map((item) => item.state)).toEqual(["done", "done", "pending"]);
    await second.service.resumeRuns();
    await second.service.settled(started.id);

    const after = await second.service.getRun(started.id, instructor);
    expect(after).toMatchObject({ status: "completed", progress: { total: 3, done: 3, ungradable: 0 } });
    // The results recorded before the restart are the very same ones.
    expect(after.items.slice(0, 2)).toEqual(before.items.slice(0, 2));
    expect(after.items[2]?.result).toMatchObject({
      gradable: true,
      score: 0,
      gradedAt: "2030-01-01T10:01:00.000Z",
    });
    expect([timesAsked(alice), timesAsked(bob), timesAsked(carol)]).toEqual([1, 1, 2]);
    expect(await second.service.listRuns(lab.id, instructor)).toHaveLength(1);
  });

  it("after a restart, ends a run as interrupted when a waiting session has gone", async () => {
    await writeFile(path.join(agents.home(alice), "hold"), "");
    const first = startService({ concurrency: 1 });
    const started = await first.service.startRun(lab.id, "ivan");
    await eventually(
      async () => timesAsked(alice),
      (asked) => asked === 1,
      { what: "alice's check to start", timeoutMs: 15_000 },
    );
    await first.service.close();
    await first.repository.close();
    await rm(path.join(agents.home(alice), "hold"));

    // While the console was down, carol's VM was deleted; the cluster is not answering yet either.
    sessions.remove(carol);
    sessions.unavailable = new Error("caches not synced yet");
    const second = startService({ concurrency: 1 });
    await second.service.resumeRuns();
    expect((await second.service.getRun(started.id, instructor)).status).toBe("running");
    sessions.unavailable = null;
    await second.service.settled(started.id);

    const run = await second.service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "interrupted", progress: { total: 3, done: 3, ungradable: 1 } });
    expect(scores(run)).toEqual({
      alice: 7,
      bob: 3,
      carol: "The session ended while the console was restarting, before it was graded.",
    });
  });

  it("keeps a result while the database is locked for a moment, and records it once it is free", async () => {
    await writeFile(path.join(agents.home(alice), "hold"), "");
    const messages: string[] = [];
    const { service } = startService({
      concurrency: 1,
      log: { info: () => {}, error: (message) => messages.push(message) },
    });
    const started = await service.startRun(lab.id, "ivan", [alice]);
    await eventually(
      async () => timesAsked(alice),
      (asked) => asked === 1,
      { what: "alice's check to start", timeoutMs: 15_000 },
    );

    const other = new Database(path.join(dir, gradingDatabaseName));
    other.exec("BEGIN IMMEDIATE");
    await rm(path.join(agents.home(alice), "hold"));
    await eventually(
      async () => messages.length,
      (count) => count > 0,
      { what: "a refused write", timeoutMs: 15_000 },
    );
    other.exec("ROLLBACK");
    other.close();

    await service.settled(started.id);
    expect(messages[0]).toMatch(
      /^Grading run .+: recording linux-basics-alice001 failed, trying again: .* is locked/,
    );
    const run = await service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "completed", progress: { done: 1, ungradable: 0 } });
    expect(scores(run)).toEqual({ alice: 7 });
    expect(timesAsked(alice)).toBe(1);
  });

  it("records a result per session before it is shown", async () => {
    const graded: SessionResult[] = [];
    const { service, repository } = startService({
      onItemGraded: ({ result }) => graded.push(result),
    });
    const started = await service.startRun(lab.id, "ivan");
    await service.settled(started.id);
    const stored = (await repository.listRunItems(started.id)).map((item) => item.result);
    expect(graded).toHaveLength(3);
    for (const result of graded) expect(stored).toContainEqual(result);
  });
});

describe("sessions whose agent cannot be believed or is not there yet", () => {
  let fake: CapturingServer;
  beforeEach(async () => {
    fake = await startFakeAgent();
  });
  afterEach(() => fake.close());

  /** carol's port answers with the fake agent; everyone else's with their real agent. */
  const carolFaked: ConnectToAgent = (id, signal) =>
    id === carol ? fake.connect(id, signal) : agents.connect(id, signal);

  /** dave's VM is Running, but nothing listens on its agent's port yet (virt-api says so). */
  const daveStarting = (bootLog: string[]) =>
    createPortForwardTransport(
      async (id, _port, signal) => {
        if (id === dave) throw new KubeStatusError(500, "", "dialing VM: connection refused");
        return agents.connect(id, signal);
      },
      { agentStartMs: 60, retryEveryMs: 20, readBootLog: async () => bootLog },
    );

  it("never scores a fake agent's full marks: not gradable, in self-checks, runs and exports", async () => {
    const { service } = startService({
      agents: createAgentClient({ connect: carolFaked, keyFor: agents.keyFor }),
    });
    const selfCheck = await service.selfCheck(aSession({ id: carol, owner: "carol" }));
    expect(selfCheck.result).toMatchObject({
      gradable: false,
      score: null,
      checks: [],
      reason:
        "The VM's grading agent could not prove itself: its answer was not signed with this session's key.",
    });

    const started = await service.startRun(lab.id, "ivan");
    await service.settled(started.id);
    const run = await service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "completed", progress: { total: 3, done: 3, ungradable: 1 } });
    expect(scores(run)).toEqual({
      alice: 7,
      bob: 3,
      carol:
        "The VM's grading agent could not prove itself: its answer was not signed with this session's key.",
    });
    expect(fake.requests()).toHaveLength(2);
    // The export leaves her cells empty: no score, and certainly not 7 of 7.
    const csv = (await service.gradesCsv(lab.id, instructor)).split("\r\n");
    expect(csv[3]).toBe("carol,linux-basics,,7,,,,2030-01-01T10:00:00.000Z," + started.id);
    // A re-run picks her up again with the others short of full marks.
    const rerun = await service.rerun(started.id, "ivan");
    expect(rerun.selectedSessionIds).toEqual([bob, carol]);
    await service.settled(rerun.id);
  });

  it("says a VM still starting its agent is not gradable yet, and finishes the run without it", async () => {
    sessions.sessions.push(aSession({ id: dave, owner: "dave" }));
    const { service } = startService({
      agents: createAgentClient({ connect: daveStarting([]), keyFor: agents.keyFor }),
    });
    const check = await service.selfCheck(aSession({ id: dave, owner: "dave" }));
    expect(check.result).toMatchObject({
      gradable: false,
      score: null,
      reason: "Your VM is still starting its grading agent. Try again in a minute.",
    });
    const started = await service.startRun(lab.id, "ivan");
    await service.settled(started.id);
    const run = await service.getRun(started.id, instructor);
    expect(run).toMatchObject({ status: "completed", progress: { total: 4, done: 4, ungradable: 1 } });
    expect(scores(run)).toEqual({ alice: 7, bob: 3, carol: 0, dave: notListeningReasons.starting });
  });

  it("says a VM whose image has no python3 is not gradable, with why", async () => {
    sessions.sessions.push(aSession({ id: dave, owner: "dave" }));
    const bootLog = [
      "cloud-init[901]: lab-agent: not started: this image has no /usr/bin/python3, so its sessions cannot be graded",
    ];
    const { service } = startService({
      agents: createAgentClient({ connect: daveStarting(bootLog), keyFor: agents.keyFor }),
    });
    const started = await service.startRun(lab.id, "ivan", [dave]);
    await service.settled(started.id);
    expect(scores(await service.getRun(started.id, instructor))).toEqual({
      dave: notListeningReasons.noPython,
    });
  });
});
