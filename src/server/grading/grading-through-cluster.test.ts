// Grading end to end: sessions launched through the BFF on an emulator with real guests. The agent
// (src/agent/lab_agent/) arrives in each VM with the session's cloud-init, systemd starts it before
// the student's console, and the BFF reaches it on port 899 through the emulator's portforward
// subresource, signing every request; students fix their work through the console subresource.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PastSessionList } from "../../common/api.ts";
import { GradingRun, SelfCheck, SelfCheckHistory } from "../../common/grading-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { aCheck, aGradingLab } from "./testing/grading-fixtures.ts";
import { runInConsole } from "./testing/guest-console.ts";

const lab = aGradingLab([
  aCheck({
    id: "hello-file",
    title: "Create ~/hello.txt containing hello",
    points: 2,
    selfCheck: true,
    run: "grep -q hello ~/hello.txt",
    hint: "Use echo and a redirect.",
    translations: { hint: { ja: "echo とリダイレクトを使いましょう。" } },
  }),
  aCheck({ id: "notes-dir", selfCheck: true, run: "test -d ~/notes", hint: "mkdir makes directories." }),
  // Long enough for a run to be caught in the middle: by a deleted VM, or by a restart.
  aCheck({ id: "slow", points: 3, run: "sleep 0.4; test -f ~/hello.txt" }),
]);

let emulator: TestEmulator;
let bff: TestBff;
/** The shared BFF's clock runs this far ahead: a self-check's next turn comes without waiting for it. */
let clockOffsetMs = 0;
const selfCheckIntervalMs = 60_000;
const sessionOf = new Map<string, string>();
const browserOf = new Map<string, TestBrowser>();
const students = ["alice", "bob", "tara"] as const;

function session(owner: string): string {
  const id = sessionOf.get(owner);
  if (!id) throw new Error(`${owner} has no session`);
  return id;
}

async function launch(owner: string, browser: TestBrowser): Promise<string> {
  const created = await browser.post("/api/sessions", { labId: lab.id });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  await eventually(
    () => browser.get(`/api/sessions/${id}`),
    (answer) => answer.body?.status === "running",
    { what: `${owner}'s session running` },
  );
  // No waiting for the agent: with fast timing cloud-init's runcmd starts it a moment after Running,
  // which the transport's short retry covers (not-gradable-through-cluster.test.ts has a slow guest).
  return id;
}

function fixInConsole(owner: string, command: string): Promise<string> {
  return runInConsole(
    { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: session(owner) },
    command,
  );
}

async function finishedRun(browser: TestBrowser, runId: string): Promise<GradingRun> {
  const answer = await eventually(
    () => browser.get(`/api/grading-runs/${runId}`),
    (each) => each.body?.status !== "running",
    { what: `grading run ${runId} finishing` },
  );
  return GradingRun.parse(answer.body);
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [lab],
    emulator,
    now: () => new Date(Date.now() + clockOffsetMs),
    gradingLimits: { selfCheckIntervalMs },
  });
  for (const owner of [...students, "ivan"]) browserOf.set(owner, await bff.signIn(owner));
  await Promise.all(
    students.map(async (owner) => sessionOf.set(owner, await launch(owner, browserOf.get(owner)!))),
  );
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("Check my work on a real session", () => {
  it("fails with the hint, then passes once the student fixed the task in the console", async () => {
    const alice = browserOf.get("alice")!;
    const checksPath = `/api/sessions/${session("alice")}/checks`;

    const first = await alice.post(checksPath);
    expect(first.status).toBe(201);
    const failed = SelfCheck.parse(first.body).result;
    expect(failed).toMatchObject({ gradable: true, score: 0, maxScore: 3 });
    // Only the self-checks ran; the graded-only check is not part of a self-check.
    expect(failed.checks.map((check) => check.checkId)).toEqual(["hello-file", "notes-dir"]);
    expect(failed.checks[0]).toMatchObject({
      passed: false,
      message: "Exited with code 2. Hint: Use echo and a redirect.",
      outputExcerpt: "grep: /home/student/hello.txt: No such file or directory",
      // The message's parts, so pages in other languages can say it in theirs.
      outcome: { kind: "exit", code: 2 },
      hint: "Use echo and a redirect.",
      translations: { hint: { ja: "echo とリダイレクトを使いましょう。" } },
    });

    // Straight away again: too soon, with the wait in plain words and in Retry-After (what is left
    // of the minute since the first check started).
    const tooSoon = await alice.post(checksPath);
    expect(tooSoon.status).toBe(429);
    const retryAfter = Number(tooSoon.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(selfCheckIntervalMs / 1000);
    expect(tooSoon.body.error.message).toBe(
      `You checked this session moments ago. Try again in ${retryAfter} s.`,
    );

    await fixInConsole("alice", "echo hello > ~/hello.txt && mkdir ~/notes");
    clockOffsetMs += selfCheckIntervalMs;
    const second = await alice.post(checksPath);
    expect(second.status).toBe(201);
    const passed = SelfCheck.parse(second.body).result;
    expect(passed).toMatchObject({ gradable: true, score: 3, maxScore: 3 });
    expect(passed.checks.every((check) => check.passed && check.message === "Passed.")).toBe(true);

    const history = SelfCheckHistory.parse((await alice.get(checksPath)).body).items;
    expect(history.map((item) => item.result.score)).toEqual([3, 0]);
    // Stored and read back with its parts for other languages.
    expect(history[1]?.result.checks[0]).toMatchObject({
      outcome: { kind: "exit", code: 2 },
      translations: { hint: { ja: "echo とリダイレクトを使いましょう。" } },
    });
    // A TA reads the same history; another student cannot even see the session.
    expect((await bff.signIn("tara").then((tara) => tara.get(checksPath))).body.items).toHaveLength(2);
    expect((await browserOf.get("bob")!.get(checksPath)).status).toBe(404);
  });
});

describe("grading runs over real sessions", () => {
  it("loses and duplicates no result when the BFF restarts in the middle of a run", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "grading-restart-"));
    // One session at a time, so the restart falls between a recorded result and ones still to come.
    const limits = { concurrency: 1 };
    let first: TestBff | undefined = await startTestBff({
      labs: [lab],
      emulator,
      gradingDataDir: dataDir,
      gradingLimits: limits,
    });
    let second: TestBff | undefined;
    try {
      const ivan = await first.signIn("ivan");
      const started = await ivan.post(`/api/labs/${lab.id}/grading-runs`);
      expect(started.status).toBe(201);
      const runId: string = started.body.id;
      expect(started.body.items).toHaveLength(3);

      const before = GradingRun.parse(
        (
          await eventually(
            () => ivan.get(`/api/grading-runs/${runId}`),
            (answer) => answer.body.progress.done >= 1,
            { what: "the first result" },
          )
        ).body,
      );
      await first.close();
      first = undefined;
      const recordedBefore = before.items.filter((item) => item.result !== null);
      expect(recordedBefore.length).toBeLessThan(3);

      second = await startTestBff({ labs: [lab], emulator, gradingDataDir: dataDir, gradingLimits: limits });
      const run = await finishedRun(await second.signIn("ivan"), runId);
      expect(run.status).toBe("completed");
      expect(run.progress).toEqual({ total: 3, done: 3, ungradable: 0 });
      expect(run.items.map((item) => item.owner).sort()).toEqual([...students].sort());
      for (const item of run.items) expect(item.result?.gradable).toBe(true);
      // What was recorded before the restart stands as it was: not graded again, not replaced.
      for (const earlier of recordedBefore) {
        expect(run.items.find((item) => item.sessionId === earlier.sessionId)?.result).toEqual(
          earlier.result,
        );
      }
      // Alice fixed her work in the first test; the others did nothing yet.
      expect(run.items.find((item) => item.owner === "alice")?.result?.score).toBe(6);
      expect(run.items.find((item) => item.owner === "bob")?.result?.score).toBe(0);
    } finally {
      await first?.close();
      await second?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("grades the others and reports a student ungradable when their VM is deleted mid-run", async () => {
    const ivan = browserOf.get("ivan")!;
    await fixInConsole("tara", "echo hello > ~/hello.txt");
    const started = await ivan.post(`/api/labs/${lab.id}/grading-runs`);
    expect(started.status).toBe(201);
    const runId: string = started.body.id;

    // Bob's VM goes away while his checks run.
    await eventually(
      () => ivan.get(`/api/grading-runs/${runId}`),
      (answer) =>
        answer.body.items.some(
          (item: { owner: string; state: string }) => item.owner === "bob" && item.state === "grading",
        ),
      { what: "bob's session being graded" },
    );
    expect((await browserOf.get("bob")!.delete(`/api/sessions/${session("bob")}`)).status).toBe(202);

    const run = await finishedRun(ivan, runId);
    expect(run.status).toBe("completed");
    expect(run.progress).toEqual({ total: 3, done: 3, ungradable: 1 });
    const byOwner = new Map(run.items.map((item) => [item.owner, item.result]));
    expect(byOwner.get("alice")).toMatchObject({ gradable: true, score: 6, maxScore: 6 });
    expect(byOwner.get("tara")).toMatchObject({ gradable: true, score: 5 });
    expect(byOwner.get("bob")).toMatchObject({ gradable: false, score: null, checks: [] });
    // Deleted while its checks ran, or just before they reached the agent: either way the reason says
    // the VM went away.
    const reason = byOwner.get("bob")?.reason ?? "";
    const brokeWhileRunning =
      "The connection to the grading agent broke before it answered (the VM or its agent may have stopped).";
    if (reason !== brokeWhileRunning) {
      expect(reason).toMatch(new RegExp(`^The VM ${session("bob")} has no running instance to connect to: `));
    }

    // Only the ungradable and short ones are graded again. Bob's VM is gone for good: the export
    // leaves his score empty, since an unreachable VM is not zero points.
    const rerun = await ivan.post(`/api/grading-runs/${runId}/rerun`);
    expect(rerun.status).toBe(201);
    expect(rerun.body.items.map((item: { owner: string }) => item.owner).sort()).toEqual(["bob", "tara"]);
    await finishedRun(ivan, rerun.body.id);
    const csv = await ivan.get(`/api/labs/${lab.id}/grades.csv`);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const rows = (csv.body as string)
      .trim()
      .split("\r\n")
      .map((line) => line.split(","));
    expect(rows[0]).toEqual([
      "student",
      "lab",
      "score",
      "max",
      "hello-file (max 2)",
      "notes-dir (max 1)",
      "slow (max 3)",
      "graded at",
      "run id",
    ]);
    const scores = new Map(rows.slice(1).map((row) => [row[0], row.slice(2, 7)]));
    expect(scores.get("alice")).toEqual(["6", "6", "2", "1", "3"]);
    expect(scores.get("tara")).toEqual(["5", "6", "2", "0", "3"]);
    expect(scores.get("bob")).toEqual(["", "6", "", "", ""]);
  });
});

describe("a student's past sessions", () => {
  it("lists their ended sessions, with the last self-check, and nobody else's", async () => {
    const carol = await bff.signIn("carol");
    const id = await launch("carol", carol);
    const checked = await carol.post(`/api/sessions/${id}/checks`);
    expect(checked.status).toBe(201);
    // Still running: not past yet.
    expect(PastSessionList.parse((await carol.get("/api/past-sessions")).body).items).toEqual([]);

    expect((await carol.delete(`/api/sessions/${id}`)).status).toBe(202);
    const past = await eventually(
      async () => PastSessionList.parse((await carol.get("/api/past-sessions")).body).items,
      (items) => items.length > 0,
      { what: "carol's ended session among her past sessions" },
    );
    expect(past).toEqual([
      {
        id,
        labId: lab.id,
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        lastSelfCheck: { checkedAt: expect.any(String), score: 0, maxScore: 3 },
      },
    ]);
    expect(Date.parse(past[0]!.endedAt!)).toBeGreaterThanOrEqual(Date.parse(past[0]!.startedAt));
    // A TA who ended a session of their own would see it; carol's is hers alone.
    for (const other of ["alice", "tara", "ivan"]) {
      const items = PastSessionList.parse((await browserOf.get(other)!.get("/api/past-sessions")).body).items;
      expect(items.map((item) => item.id)).not.toContain(id);
    }
  });
});
