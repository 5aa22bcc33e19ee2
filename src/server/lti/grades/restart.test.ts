// The outbox across a restart of the BFF: a score whose post was under way when the service closed,
// and a run's result recorded in grading.db but never put in the outbox. Both reach the gradebook
// once, from the service opened again on the same data folder.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../../common/testing/patience.ts";
import { gradableResult } from "../../grading/testing/result-builders.ts";
import { roles } from "../testing/test-platform.ts";
import { courseId } from "./course-id.ts";
import { startGradesHarness, type GradesHarness } from "./testing/grades-harness.ts";
import { launch } from "./testing/test-launches.ts";

let harness: GradesHarness;
beforeAll(async () => {
  harness = await startGradesHarness();
  harness.lms.addUser({ sub: "alice", name: "Alice", email: "alice@school.example" });
  harness.lms.addUser({ sub: "bob", name: "Bob", email: "bob@school.example" });
});
afterEach(() => expect(harness.warnings).toEqual([]));
afterAll(() => harness?.close());

const lab = "linux-basics";

async function linkedCourse(id: string, sub: string): Promise<string> {
  const { lms, platform } = harness;
  lms.addCourse({ id, title: id });
  lms.enrol(id, sub, [roles.learner]);
  const link = lms.addResourceLink(id, { title: "Linux basics", custom: { lab } });
  await harness.grades.recordLaunch(
    await launch(lms, platform, { sub, courseId: id, resourceLinkId: link.id }),
  );
  return courseId(platform.id, id);
}

describe("the outbox across a restart", () => {
  it("sends a score again after a restart that cut its post short, and the gradebook keeps one result", async () => {
    const { lms } = harness;
    const course = await linkedCourse("restart-mid-post", "alice");
    lms.quirks.holdScores = true;
    const gradedAt = "2030-05-01T10:00:00.000Z";
    harness.grades.runItemGraded({
      runId: "run-held",
      labId: lab,
      sessionId: `${lab}-alice001`,
      owner: "alice@school.example",
      result: gradableResult({
        owner: "alice@school.example",
        labId: lab,
        gradedAt,
        checks: [],
        score: 2,
        maxScore: 4,
      }),
      gradedAt,
    });
    // The LMS recorded the score and has not answered yet: the BFF stops now.
    await eventually(
      async () => lms.scorePosts().map((post) => post.status),
      (statuses) => statuses.includes("held"),
      { what: "the score's post held by the LMS" },
    );
    await harness.restart();
    const [item] = lms.lineItems("restart-mid-post");
    expect(lms.results(item!.id)).toHaveLength(1);
    const [cut] = (await harness.repository.listScores({ states: ["pending", "posted"] }, 10)).filter(
      (score) => score.courseId === course,
    );
    // The stopping service left it as it was: pending, never counted as an attempt.
    expect(cut).toMatchObject({ state: "pending", attempts: 0, lastError: null });

    lms.quirks.holdScores = false;
    const posted = await eventually(
      () => harness.repository.getScore(cut!.id),
      (score) => score?.state === "posted",
      { what: "the score posted after the restart" },
    );
    expect(posted).toMatchObject({ attempts: 1, gradedAt });
    expect(
      lms
        .scorePosts()
        .filter((post) => post.lineItemId === item!.id)
        .map((post) => post.status),
    ).toEqual(["closed", 204]);
    expect(lms.results(item!.id)).toEqual([
      expect.objectContaining({ userId: "alice", scoreGiven: 2, scoreMaximum: 4, timestamp: gradedAt }),
    ]);
    expect(lms.lineItems("restart-mid-post")).toHaveLength(1);
  });

  it("puts a run's result in the outbox at start when the process ended before it did", async () => {
    const { lms, grading } = harness;
    await linkedCourse("reconciled", "bob");
    const sessionId = `${lab}-bob00001`;
    const result = gradableResult({
      owner: "bob@school.example",
      labId: lab,
      sessionId,
      gradedAt: "2030-05-02T10:00:00.000Z",
      checks: [],
      score: 4,
      maxScore: 4,
    });
    // Recorded in grading.db as the run worker records it; the event that enqueues it never came.
    await grading.createRun({
      id: "run-before-crash",
      labId: lab,
      startedBy: "ivan",
      createdAt: "2030-05-02T09:59:00.000Z",
      selectedSessionIds: null,
      rerunOf: null,
      items: [{ sessionId, owner: "bob@school.example" }],
    });
    await grading.recordResult("run-before-crash", sessionId, result);

    await harness.restart();
    await eventually(
      async () => lms.results(lms.lineItems("reconciled")[0]?.id ?? "none"),
      (results) => results.length === 1,
      { what: "bob's result in the gradebook" },
    );
    expect(lms.results(lms.lineItems("reconciled")[0]!.id)).toEqual([
      expect.objectContaining({ userId: "bob", scoreGiven: 4, timestamp: "2030-05-02T10:00:00.000Z" }),
    ]);
    // Started again, it finds the result in the outbox already and sends nothing more.
    await harness.restart();
    await harness.grades.close();
    const scores = await harness.repository.listScores(
      { states: ["pending", "posted", "refused", "superseded"] },
      50,
    );
    expect(scores.filter((score) => score.sourceId === `run-before-crash:${sessionId}`)).toMatchObject([
      { state: "posted" },
    ]);
  });
});
