// The behaviour every GradingRepository must show, as a suite any implementation can run:
// describeGradingRepositoryContract("postgres", createPostgresHarness) is all a new backend needs.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionResult } from "../../../common/grading.ts";
import type { GradingRepository, NewRun } from "../repository.ts";
import { checkResult, gradableResult, ungradableResult } from "./result-builders.ts";

export interface RepositoryHarness {
  repository: GradingRepository;
  /** The same store through a new connection, as the console sees it after a restart. */
  reopen(): Promise<GradingRepository>;
  /** Closes whatever is open and removes the store. */
  cleanup(): Promise<void>;
}

const lab = "linux-basics";

function newRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: "run-1",
    labId: lab,
    startedBy: "ivan",
    createdAt: "2030-01-01T10:00:00.000Z",
    selectedSessionIds: null,
    rerunOf: null,
    // alice's session is in section a; bob's course has no sections.
    items: [
      { sessionId: "s-alice", owner: "alice", section: "a" },
      { sessionId: "s-bob", owner: "bob" },
    ],
    ...overrides,
  };
}

function resultFor(sessionId: string, owner: string, overrides: Partial<SessionResult> = {}): SessionResult {
  return overrides.gradable === false
    ? ungradableResult({ sessionId, owner, labId: lab, ...(overrides as object) })
    : gradableResult({ sessionId, owner, labId: lab, ...(overrides as object) });
}

export function describeGradingRepositoryContract(
  name: string,
  create: () => Promise<RepositoryHarness>,
): void {
  describe(`GradingRepository contract: ${name}`, () => {
    let harness: RepositoryHarness;
    let repository: GradingRepository;

    beforeEach(async () => {
      harness = await create();
      repository = harness.repository;
    });
    afterEach(() => harness.cleanup());

    describe("self-checks", () => {
      it("lists a session's checks newest first, up to the limit, and only that session's", async () => {
        for (const [index, sessionId] of ["s-alice", "s-bob", "s-alice", "s-alice"].entries()) {
          await repository.recordSelfCheck({
            sessionId,
            labId: lab,
            owner: sessionId === "s-alice" ? "alice" : "bob",
            checkedAt: `2030-01-01T10:0${index}:00.000Z`,
            result: resultFor(sessionId, "alice", { gradedAt: `2030-01-01T10:0${index}:00.000Z` }),
          });
        }
        const checks = await repository.listSelfChecks("s-alice", 2);
        expect(checks.map((check) => check.checkedAt)).toEqual([
          "2030-01-01T10:03:00.000Z",
          "2030-01-01T10:02:00.000Z",
        ]);
        expect(checks[0]).toMatchObject({ sessionId: "s-alice", labId: lab, owner: "alice" });
        expect(checks[0]?.result).toEqual(
          resultFor("s-alice", "alice", { gradedAt: "2030-01-01T10:03:00.000Z" }),
        );
        expect(await repository.listSelfChecks("s-nobody", 10)).toEqual([]);
      });

      it("gives every check its own id", async () => {
        const check = {
          sessionId: "s-alice",
          labId: lab,
          owner: "alice",
          checkedAt: "2030-01-01T10:00:00.000Z",
          result: resultFor("s-alice", "alice"),
        };
        const first = await repository.recordSelfCheck(check);
        const second = await repository.recordSelfCheck(check);
        expect(second.id).not.toBe(first.id);
        expect(await repository.listSelfChecks("s-alice", 10)).toHaveLength(2);
      });
    });

    describe("runs", () => {
      it("creates a running run whose items wait in the given order", async () => {
        const run = await repository.createRun(newRun({ selectedSessionIds: ["s-alice", "s-bob"] }));
        expect(run).toEqual({
          id: "run-1",
          labId: lab,
          startedBy: "ivan",
          createdAt: "2030-01-01T10:00:00.000Z",
          selectedSessionIds: ["s-alice", "s-bob"],
          rerunOf: null,
          status: "running",
          finishedAt: null,
          counts: { total: 2, done: 0, ungradable: 0 },
        });
        expect(await repository.getRun("run-1")).toEqual(run);
        expect(await repository.listRunItems("run-1")).toEqual([
          {
            runId: "run-1",
            sessionId: "s-alice",
            owner: "alice",
            section: "a",
            status: "pending",
            result: null,
          },
          {
            runId: "run-1",
            sessionId: "s-bob",
            owner: "bob",
            section: null,
            status: "pending",
            result: null,
          },
        ]);
        expect(await repository.getRun("run-unknown")).toBeUndefined();
      });

      it("stores a run with all its items or not at all", async () => {
        const duplicate = newRun({
          items: [
            { sessionId: "s-alice", owner: "alice" },
            { sessionId: "s-alice", owner: "alice" },
          ],
        });
        await expect(repository.createRun(duplicate)).rejects.toThrow();
        expect(await repository.listRuns({})).toEqual([]);
        expect(await repository.listRunItems("run-1")).toEqual([]);
      });

      it("refuses a second run with the same id and keeps the first", async () => {
        await repository.createRun(newRun());
        await expect(repository.createRun(newRun({ labId: "other-lab", items: [] }))).rejects.toThrow();
        expect((await repository.getRun("run-1"))?.labId).toBe(lab);
        expect(await repository.listRunItems("run-1")).toHaveLength(2);
      });

      it("lists runs newest first, filtered by lab and status", async () => {
        await repository.createRun(newRun({ id: "run-a", createdAt: "2030-01-01T10:00:00.000Z", items: [] }));
        await repository.createRun(
          newRun({ id: "run-b", labId: "other-lab", createdAt: "2030-01-01T11:00:00.000Z", items: [] }),
        );
        await repository.createRun(newRun({ id: "run-c", createdAt: "2030-01-01T12:00:00.000Z", items: [] }));
        await repository.finishRun({
          runId: "run-c",
          status: "completed",
          finishedAt: "2030-01-01T12:01:00.000Z",
        });

        const ids = async (filter: Parameters<GradingRepository["listRuns"]>[0]) =>
          (await repository.listRuns(filter)).map((run) => run.id);
        expect(await ids({})).toEqual(["run-c", "run-b", "run-a"]);
        expect(await ids({ labId: lab })).toEqual(["run-c", "run-a"]);
        expect(await ids({ status: "running" })).toEqual(["run-b", "run-a"]);
        expect(await ids({ labId: lab, status: "completed" })).toEqual(["run-c"]);
      });
    });

    describe("results", () => {
      it("records a result once: a second one for the same (run, session) changes nothing", async () => {
        await repository.createRun(newRun());
        const first = resultFor("s-alice", "alice", { score: 2 });
        const second = resultFor("s-alice", "alice", {
          gradedAt: "2030-01-01T10:05:00.000Z",
          checks: [checkResult({ points: 0, passed: false, message: "Exited with code 1." })],
          score: 0,
        });

        const recorded = await repository.recordResult("run-1", "s-alice", first);
        expect(recorded).toEqual({
          recorded: true,
          item: {
            runId: "run-1",
            sessionId: "s-alice",
            owner: "alice",
            section: "a",
            status: "done",
            result: first,
          },
        });
        const repeated = await repository.recordResult("run-1", "s-alice", second);
        expect(repeated).toEqual({ recorded: false, item: recorded.item });

        const items = await repository.listRunItems("run-1");
        expect(items.map((item) => item.result)).toEqual([first, null]);
        expect((await repository.getRun("run-1"))?.counts).toEqual({ total: 2, done: 1, ungradable: 0 });
      });

      it("records exactly one of two results that arrive at the same time", async () => {
        await repository.createRun(newRun());
        const outcomes = await Promise.all([
          repository.recordResult("run-1", "s-bob", resultFor("s-bob", "bob", { score: 1 })),
          repository.recordResult("run-1", "s-bob", resultFor("s-bob", "bob", { gradable: false })),
        ]);
        expect(outcomes.filter((outcome) => outcome.recorded)).toHaveLength(1);
        expect(outcomes[1]?.item.result).toEqual(outcomes[0]?.item.result);
      });

      it("counts ungradable results", async () => {
        await repository.createRun(newRun());
        await repository.recordResult("run-1", "s-bob", resultFor("s-bob", "bob", { gradable: false }));
        expect((await repository.getRun("run-1"))?.counts).toEqual({ total: 2, done: 1, ungradable: 1 });
      });

      it("refuses a result for a session that is not in the run, or under another session's id", async () => {
        await repository.createRun(newRun());
        await expect(
          repository.recordResult("run-1", "s-carol", resultFor("s-carol", "carol")),
        ).rejects.toThrow(/s-carol/);
        await expect(
          repository.recordResult("run-1", "s-bob", resultFor("s-alice", "alice")),
        ).rejects.toThrow();
        await expect(repository.recordResult("run-x", "s-bob", resultFor("s-bob", "bob"))).rejects.toThrow();
        expect((await repository.getRun("run-1"))?.counts.done).toBe(0);
      });
    });

    describe("finishing a run", () => {
      it("refuses to finish while an item is pending, and changes nothing", async () => {
        await repository.createRun(newRun());
        await repository.recordResult("run-1", "s-alice", resultFor("s-alice", "alice"));
        await expect(
          repository.finishRun({
            runId: "run-1",
            status: "completed",
            finishedAt: "2030-01-01T10:10:00.000Z",
          }),
        ).rejects.toThrow(/no result/);
        expect(await repository.getRun("run-1")).toMatchObject({ status: "running", finishedAt: null });
      });

      it("records the closing results and the status together", async () => {
        await repository.createRun(newRun());
        await repository.recordResult("run-1", "s-alice", resultFor("s-alice", "alice"));
        const gone = resultFor("s-bob", "bob", { gradable: false, reason: "The VM was gone." });
        const run = await repository.finishRun({
          runId: "run-1",
          status: "interrupted",
          finishedAt: "2030-01-01T10:10:00.000Z",
          closingResults: [
            // Already recorded: the first result stands.
            { sessionId: "s-alice", result: resultFor("s-alice", "alice", { gradable: false }) },
            { sessionId: "s-bob", result: gone },
          ],
        });
        expect(run).toMatchObject({
          status: "interrupted",
          finishedAt: "2030-01-01T10:10:00.000Z",
          counts: { total: 2, done: 2, ungradable: 1 },
        });
        const items = await repository.listRunItems("run-1");
        expect(items.map((item) => item.result?.gradable)).toEqual([true, false]);
        expect(items[1]?.result).toEqual(gone);
      });

      it("leaves a finished run as it was", async () => {
        await repository.createRun(newRun({ items: [] }));
        const done = await repository.finishRun({
          runId: "run-1",
          status: "completed",
          finishedAt: "2030-01-01T10:10:00.000Z",
        });
        const again = await repository.finishRun({
          runId: "run-1",
          status: "interrupted",
          finishedAt: "2030-01-01T11:00:00.000Z",
        });
        expect(again).toEqual(done);
        await expect(
          repository.finishRun({
            runId: "run-x",
            status: "completed",
            finishedAt: "2030-01-01T10:10:00.000Z",
          }),
        ).rejects.toThrow(/run-x/);
      });
    });

    describe("latest results", () => {
      it("gives each student's latest gradable result, else the latest ungradable one", async () => {
        const at = (minute: number) => `2030-01-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
        await repository.createRun(
          newRun({
            id: "run-1",
            createdAt: at(0),
            items: [
              { sessionId: "s-alice", owner: "alice", section: "a" },
              { sessionId: "s-bob", owner: "bob" },
              { sessionId: "s-carol", owner: "carol" },
            ],
          }),
        );
        await repository.recordResult(
          "run-1",
          "s-alice",
          resultFor("s-alice", "alice", { score: 1, gradedAt: at(1) }),
        );
        await repository.recordResult(
          "run-1",
          "s-bob",
          resultFor("s-bob", "bob", { score: 1, gradedAt: at(1) }),
        );
        await repository.recordResult(
          "run-1",
          "s-carol",
          resultFor("s-carol", "carol", { gradable: false, gradedAt: at(1) }),
        );

        await repository.createRun(
          newRun({
            id: "run-2",
            createdAt: at(10),
            items: [
              { sessionId: "s-alice", owner: "alice" },
              { sessionId: "s-bob-2", owner: "bob" },
              { sessionId: "s-dave", owner: "dave" },
            ],
          }),
        );
        // alice's VM was unreachable this time: her earlier grade stands.
        await repository.recordResult(
          "run-2",
          "s-alice",
          resultFor("s-alice", "alice", { gradable: false, gradedAt: at(11) }),
        );
        // bob's newer grade replaces the older one, even from another session.
        await repository.recordResult(
          "run-2",
          "s-bob-2",
          resultFor("s-bob-2", "bob", { score: 2, gradedAt: at(11) }),
        );
        // dave is still pending: nothing to export for him yet.

        await repository.createRun(
          newRun({
            id: "run-other",
            labId: "other-lab",
            createdAt: at(20),
            items: [{ sessionId: "s-erin", owner: "erin" }],
          }),
        );
        await repository.recordResult(
          "run-other",
          "s-erin",
          gradableResult({ sessionId: "s-erin", owner: "erin", labId: "other-lab" }),
        );

        const latest = await repository.latestResults(lab);
        expect(
          latest.map(({ runId, section, result }) => [
            result.owner,
            runId,
            section,
            result.score,
            result.gradable,
          ]),
        ).toEqual([
          ["alice", "run-1", "a", 1, true],
          ["bob", "run-2", null, 2, true],
          ["carol", "run-1", null, null, false],
        ]);
      });
    });

    it("keeps everything it acknowledged across a reopen", async () => {
      await repository.createRun(newRun());
      const result = resultFor("s-alice", "alice");
      await repository.recordResult("run-1", "s-alice", result);
      await repository.recordSelfCheck({
        sessionId: "s-bob",
        labId: lab,
        owner: "bob",
        checkedAt: "2030-01-01T10:00:00.000Z",
        result: resultFor("s-bob", "bob"),
      });

      const reopened = await harness.reopen();
      expect((await reopened.getRun("run-1"))?.counts).toEqual({ total: 2, done: 1, ungradable: 0 });
      expect((await reopened.listRunItems("run-1"))[0]?.result).toEqual(result);
      expect(await reopened.listSelfChecks("s-bob", 10)).toHaveLength(1);
      expect(
        (await reopened.recordResult("run-1", "s-alice", resultFor("s-alice", "alice", { score: 0 })))
          .recorded,
      ).toBe(false);
    });
  });
}
