// The score outbox against the test LMS over real HTTP: launches from the platform's own id_tokens,
// scores from grading runs and self-checks, the platform's gradebook read back. Each test has a
// course of its own.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../../common/testing/patience.ts";
import { gradableResult, ungradableResult } from "../../grading/testing/result-builders.ts";
import { roles } from "../testing/test-platform.ts";
import { courseId } from "./course-id.ts";
import type { ScoreRecord } from "./repository.ts";
import { startGradesHarness, type GradesHarness } from "./testing/grades-harness.ts";
import { launch } from "./testing/test-launches.ts";

let harness: GradesHarness;
beforeAll(async () => {
  harness = await startGradesHarness();
  for (const sub of ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"]) {
    harness.lms.addUser({ sub, name: sub, email: `${sub.toUpperCase()}@school.example` });
  }
});
afterEach(() => expect(harness.warnings).toEqual([]));
afterAll(() => harness?.close());

const alice = "alice@school.example";
const bob = "bob@school.example";
// Each in one course only: a student linked from several courses is sent every score in each.
const carol = "carol@school.example";
const dave = "dave@school.example";
const erin = "erin@school.example";
const frank = "frank@school.example";
const grace = "grace@school.example";
const heidi = "heidi@school.example";
const lab = "linux-basics";

/** A course of its own where everyone learns, with a link to the lab: its id at the LMS and the link's. */
function aCourse(link: { custom?: Record<string, string>; lineItem?: boolean } = {}) {
  const { lms } = harness;
  const course = lms.addCourse({ id: `course-${randomUUID()}`, title: "Linux 101" });
  lms.enrol(course.id, "alice", [roles.learner]);
  lms.enrol(course.id, "bob", [roles.learner]);
  lms.enrol(course.id, "carol", [roles.learner]);
  for (const sub of ["dave", "erin", "frank", "grace", "heidi"]) lms.enrol(course.id, sub, [roles.learner]);
  lms.enrol(course.id, "ivan", [roles.instructor]);
  const lineItem =
    link.lineItem === true
      ? lms.addLineItem(course.id, { label: "Lab 1 (the instructor's column)", scoreMaximum: 10 })
      : undefined;
  const resourceLink = lms.addResourceLink(course.id, {
    title: "Linux basics",
    custom: link.custom ?? { lab },
    lineItemId: lineItem?.id,
  });
  return { courseId: course.id, linkId: resourceLink.id };
}

async function launchAs(sub: string, course: { courseId: string; linkId: string }) {
  const launched = await launch(harness.lms, harness.platform, {
    sub,
    courseId: course.courseId,
    resourceLinkId: course.linkId,
  });
  await harness.grades.recordLaunch(launched);
  return launched;
}

function graded(owner: string, runId: string, gradedAt: string, score = 3) {
  const sessionId = `${lab}-${owner.slice(0, 5)}001`;
  const result = gradableResult({
    owner,
    labId: lab,
    sessionId,
    gradedAt,
    checks: [],
    score,
    maxScore: 4,
  });
  return { runId, labId: lab, sessionId, owner, result, gradedAt };
}

type TestCourse = ReturnType<typeof aCourse>;

/** The person's scores in the course, oldest first. */
async function scoresOf(course: TestCourse, username: string): Promise<ScoreRecord[]> {
  const all = await harness.repository.listScores(
    { states: ["pending", "posted", "refused", "superseded"] },
    500,
  );
  const id = courseId(harness.platform.id, course.courseId);
  return all.filter((score) => score.courseId === id && score.username === username).reverse();
}

/** Once the person has `count` scores in the course and none is pending. */
function settled(course: TestCourse, username: string, count: number): Promise<ScoreRecord[]> {
  return eventually(
    () => scoresOf(course, username),
    (scores) => scores.length === count && scores.every((score) => score.state !== "pending"),
    { what: `${count} scores of ${username} sent` },
  );
}

const statusesOfPosts = (lineItemId: string) =>
  harness.lms
    .scorePosts()
    .filter((post) => post.lineItemId === lineItemId)
    .map((post) => post.status);

describe("the score outbox", () => {
  it("creates the line item once and posts each score once, across launches and scores at the same moment", async () => {
    const course = aCourse();
    const tokensBefore = harness.lms.tokenRequests().length;
    await launchAs("alice", course);
    await launchAs("alice", course);
    await launchAs("bob", course);
    const aliceGraded = graded(alice, "run-once", "2030-04-01T10:00:00.123Z", 3);
    // The same item reported twice, and bob's beside it.
    harness.grades.runItemGraded(aliceGraded);
    harness.grades.runItemGraded(aliceGraded);
    harness.grades.runItemGraded(graded(bob, "run-once", "2030-04-01T10:00:01.000Z", 4));

    const [aliceScore] = await settled(course, alice, 1);
    const [bobScore] = await settled(course, bob, 1);
    expect(aliceScore).toMatchObject({ state: "posted", attempts: 1, lastError: null, scoreGiven: 3 });
    expect(bobScore).toMatchObject({ state: "posted", scoreGiven: 4 });

    const [item, ...more] = harness.lms.lineItems(course.courseId);
    expect(more).toEqual([]);
    expect(item).toMatchObject({
      label: "Linux basics",
      scoreMaximum: 4,
      resourceId: lab,
      tag: "lab-console",
    });
    const results = harness.lms.results(item!.id);
    expect(
      results.map(({ userId, scoreGiven, scoreMaximum, timestamp }) => ({
        userId,
        scoreGiven,
        scoreMaximum,
        timestamp,
      })),
    ).toEqual(
      expect.arrayContaining([
        { userId: "alice", scoreGiven: 3, scoreMaximum: 4, timestamp: "2030-04-01T10:00:00.123Z" },
        { userId: "bob", scoreGiven: 4, scoreMaximum: 4, timestamp: "2030-04-01T10:00:01.000Z" },
      ]),
    );
    expect(results).toHaveLength(2);
    expect(statusesOfPosts(item!.id)).toEqual([204, 204]);
    expect(harness.lms.results(item!.id).find((result) => result.userId === "alice")).toMatchObject({
      activityProgress: "Completed",
      gradingProgress: "FullyGraded",
    });
    // One token for line items and one for scores, whatever the number of scores.
    expect(
      harness.lms
        .tokenRequests()
        .slice(tokensBefore)
        .map((request) => [request.status, request.requestedScopes]),
    ).toEqual([
      [200, ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"]],
      [200, ["https://purl.imsglobal.org/spec/lti-ags/scope/score"]],
    ]);

    // A later run's result goes to the same column and replaces alice's result there.
    harness.grades.runItemGraded(graded(alice, "run-later", "2030-04-02T09:00:00.000Z", 4));
    await settled(course, alice, 2);
    expect(harness.lms.lineItems(course.courseId)).toHaveLength(1);
    expect(harness.lms.results(item!.id).find((result) => result.userId === "alice")).toMatchObject({
      scoreGiven: 4,
      timestamp: "2030-04-02T09:00:00.000Z",
    });
  });

  it("posts to the line item the launch's claim names, and creates none", async () => {
    const course = aCourse({ lineItem: true });
    await launchAs("alice", course);
    harness.grades.runItemGraded(graded(alice, `run-${randomUUID()}`, "2030-04-01T11:00:00.000Z"));
    await settled(course, alice, 1);
    const items = harness.lms.lineItems(course.courseId);
    expect(items.map((item) => item.label)).toEqual(["Lab 1 (the instructor's column)"]);
    expect(harness.lms.results(items[0]!.id)).toMatchObject([{ userId: "alice", scoreGiven: 3 }]);
  });

  it("posts to the lab's line item the LMS lists, even listed twice, rather than making another", async () => {
    const course = aCourse();
    // As a deep link's line item: the lab's id as its resourceId, tied to no link the launch names.
    harness.lms.addLineItem(course.courseId, {
      label: "Linux basics (added)",
      scoreMaximum: 4,
      resourceId: lab,
    });
    harness.lms.quirks.duplicateLineItemsVisible = true;
    try {
      await launchAs("alice", course);
      harness.grades.runItemGraded(graded(alice, `run-${randomUUID()}`, "2030-04-03T09:00:00.000Z"));
      await settled(course, alice, 1);
    } finally {
      harness.lms.quirks.duplicateLineItemsVisible = false;
    }
    const [item, ...more] = harness.lms.lineItems(course.courseId);
    expect(more).toEqual([]);
    expect(item?.label).toBe("Linux basics (added)");
    expect(harness.lms.results(item!.id)).toMatchObject([{ userId: "alice", scoreGiven: 3 }]);
  });

  it("keeps the first column stored when two links to the lab in one course name their own", async () => {
    const course = aCourse({ lineItem: true });
    const [first] = harness.lms.lineItems(course.courseId);
    const second = harness.lms.addLineItem(course.courseId, { label: "Lab 1 again", scoreMaximum: 10 });
    const otherLink = harness.lms.addResourceLink(course.courseId, {
      title: "Linux basics (week 2)",
      custom: { lab },
      lineItemId: second.id,
    });
    await launchAs("erin", course);
    await launchAs("frank", { courseId: course.courseId, linkId: otherLink.id });
    harness.grades.runItemGraded(graded(erin, "run-two-links", "2030-04-03T11:00:00.000Z", 2));
    harness.grades.runItemGraded(graded(frank, "run-two-links", "2030-04-03T11:00:01.000Z", 4));
    await settled(course, erin, 1);
    await settled(course, frank, 1);
    const results = harness.lms.results(first!.id).map((result) => [result.userId, result.scoreGiven]);
    expect(results.sort()).toEqual([
      ["erin", 2],
      ["frank", 4],
    ]);
    expect(harness.lms.results(second.id)).toEqual([]);
  });

  it("finds or makes another column when the instructor deleted the one it posted to", async () => {
    const course = aCourse({ lineItem: true });
    const [deleted] = harness.lms.lineItems(course.courseId);
    await launchAs("grace", course);
    harness.grades.runItemGraded(graded(grace, "run-before-delete", "2030-04-03T13:00:00.000Z", 2));
    await settled(course, grace, 1);
    harness.lms.deleteLineItem(deleted!.id);

    harness.grades.runItemGraded(graded(grace, "run-after-delete", "2030-04-03T14:00:00.000Z", 3));
    const [, after] = await settled(course, grace, 2);
    expect(after).toMatchObject({ state: "posted", attempts: 1, lastError: null });
    const [made, ...more] = harness.lms.lineItems(course.courseId);
    expect(more).toEqual([]);
    expect(made).toMatchObject({ label: "Linux basics", resourceId: lab, tag: "lab-console" });
    expect(harness.lms.results(made!.id)).toMatchObject([{ userId: "grace", scoreGiven: 3 }]);
    expect(statusesOfPosts(deleted!.id)).toEqual([204, 404]);
    expect(await harness.repository.lineItem(courseId(harness.platform.id, course.courseId), lab)).toBe(
      made!.url,
    );
  });

  it("sends no score to a line item the LMS names at an address that is not https", async () => {
    const course = aCourse();
    await launchAs("heidi", course);
    harness.lms.quirks.lineItemsNamedAt = "http://lms.example";
    try {
      harness.grades.runItemGraded(graded(heidi, "run-plain-http", "2030-04-03T15:00:00.000Z"));
      const [refused] = await settled(course, heidi, 1);
      expect(refused?.state).toBe("refused");
      expect(refused?.lastError).toMatch(
        /gave the line item of linux-basics an address that is not https \(http:\/\/lms\.example\/courses\/.*\): Lab Console sends scores and their access token only over https\.$/,
      );
    } finally {
      harness.lms.quirks.lineItemsNamedAt = null;
    }
    const [item] = harness.lms.lineItems(course.courseId);
    expect(statusesOfPosts(item!.id)).toEqual([]);
    expect(
      await harness.repository.lineItem(courseId(harness.platform.id, course.courseId), lab),
    ).toBeUndefined();
  });

  it("tries a score the LMS answers 503 again after a backoff, keeping the error meanwhile", async () => {
    const course = aCourse();
    await launchAs("carol", course);
    harness.lms.quirks.failScores = 2;
    harness.grades.runItemGraded(graded(carol, "run-503", "2030-04-03T10:00:00.000Z"));
    const waiting = await eventually(
      async () => (await scoresOf(course, carol))[0],
      (score) => score?.lastError !== null && score?.lastError !== undefined,
      { what: "the first failure recorded" },
    );
    expect(waiting).toMatchObject({ state: "pending", attempts: 1 });
    expect(waiting?.lastError).toMatch(
      /refused a score \(HTTP 503\): Service Unavailable: the gradebook is being upgraded/,
    );
    expect(Date.parse(waiting!.nextAttemptAt!)).toBeGreaterThan(Date.now());

    const posted = await eventually(
      async () => (await scoresOf(course, carol))[0],
      (score) => score?.state === "posted",
      { what: "the score posted after the failures" },
    );
    expect(posted).toMatchObject({ attempts: 3, lastError: null });
    const [item] = harness.lms.lineItems(course.courseId);
    expect(statusesOfPosts(item!.id)).toEqual([503, 503, 204]);
  });

  it("sends a student's score to every course they are linked to the lab from", async () => {
    const monday = aCourse();
    const tuesday = aCourse();
    await launchAs("bob", monday);
    await launchAs("bob", tuesday);
    harness.grades.runItemGraded(graded(bob, "run-both", "2030-04-03T12:00:00.000Z", 2));
    for (const course of [monday, tuesday]) {
      await settled(course, bob, 1);
      const [item] = harness.lms.lineItems(course.courseId);
      expect(harness.lms.results(item!.id)).toMatchObject([{ userId: "bob", scoreGiven: 2 }]);
    }
  });

  it("leaves ungradable results out, and sends self-checks only through links that ask for them", async () => {
    const plain = aCourse();
    const withSelfChecks = aCourse({ custom: { lab, post_self_checks: "true" } });
    await launchAs("alice", plain);
    await launchAs("alice", withSelfChecks);
    harness.grades.runItemGraded({
      ...graded(alice, "run-ungradable", "2030-04-04T10:00:00.000Z"),
      result: ungradableResult({ owner: alice, labId: lab }),
    });
    harness.grades.selfChecked({
      id: 4242,
      sessionId: `${lab}-alice001`,
      labId: lab,
      owner: alice,
      checkedAt: "2030-04-04T10:05:00.000Z",
      result: gradableResult({
        owner: alice,
        labId: lab,
        gradedAt: "2030-04-04T10:05:00.000Z",
        score: 1,
        maxScore: 4,
        checks: [],
      }),
    });
    const [selfCheck] = await settled(withSelfChecks, alice, 1);
    expect(selfCheck).toMatchObject({
      state: "posted",
      source: "self-check",
      sourceId: "4242",
      scoreGiven: 1,
    });
    const [item] = harness.lms.lineItems(withSelfChecks.courseId);
    expect(harness.lms.results(item!.id)).toMatchObject([{ userId: "alice", scoreGiven: 1 }]);
    expect(harness.lms.lineItems(plain.courseId)).toEqual([]);
    expect(await scoresOf(plain, alice)).toEqual([]);
  });
});

describe("a self-check", () => {
  it("taken after a grading run does not replace the run's score in the gradebook", async () => {
    const course = aCourse({ custom: { lab, post_self_checks: "true" } });
    await launchAs("erin", course);
    harness.grades.runItemGraded(graded(erin, "run-then-check", "2030-04-06T10:00:00.000Z", 3));
    await settled(course, erin, 1);
    harness.grades.selfChecked({
      id: 5151,
      sessionId: `${lab}-erin@001`,
      labId: lab,
      owner: erin,
      checkedAt: "2030-04-06T11:00:00.000Z",
      result: gradableResult({
        owner: erin,
        labId: lab,
        gradedAt: "2030-04-06T11:00:00.000Z",
        score: 1,
        maxScore: 4,
        checks: [],
      }),
    });
    const [run, check] = await settled(course, erin, 2);
    expect(run).toMatchObject({ source: "run", state: "posted" });
    expect(check).toMatchObject({ source: "self-check", state: "superseded" });
    const [item] = harness.lms.lineItems(course.courseId);
    expect(harness.lms.results(item!.id)).toMatchObject([{ userId: "erin", scoreGiven: 3 }]);
    expect(statusesOfPosts(item!.id)).toEqual([204]);
  });
});

describe("a refused score", () => {
  it("is not sent again once a newer score of the student is posted", async () => {
    const { lms } = harness;
    const course = aCourse();
    lms.setPublished(course.courseId, false);
    lms.quirks.unpublishedCourseRefusal = true;
    let refused: ScoreRecord | undefined;
    try {
      await launchAs("frank", course);
      harness.grades.runItemGraded(graded(frank, "run-refused-first", "2030-04-07T10:00:00.000Z", 1));
      [refused] = await settled(course, frank, 1);
      expect(refused?.state).toBe("refused");
    } finally {
      lms.setPublished(course.courseId, true);
      lms.quirks.unpublishedCourseRefusal = false;
    }
    harness.grades.runItemGraded(graded(frank, "run-posted-later", "2030-04-07T11:00:00.000Z", 4));
    await settled(course, frank, 2);
    const [item] = lms.lineItems(course.courseId);
    expect(statusesOfPosts(item!.id)).toEqual([422, 204]);

    const ivan = await harness.browser("ivan");
    const retried = await ivan.post(`/api/lti/scores/${refused!.id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(409);
    expect(retried.body.error).toMatchObject({ reason: "lti_score_superseded", params: { student: frank } });
    expect((await harness.repository.getScore(refused!.id))?.state).toBe("superseded");
    // Asked again, it says the same; and nothing went to the LMS meanwhile.
    const again = await ivan.post(`/api/lti/scores/${refused!.id}/retry`);
    expect(again.body.error?.reason).toBe("lti_score_superseded");
    expect(statusesOfPosts(item!.id)).toEqual([422, 204]);
    expect(lms.results(item!.id)).toMatchObject([{ userId: "frank", scoreGiven: 4 }]);
  });

  it("is refused with the LMS's reason, and posted once the instructor published the course and retried it", async () => {
    const { lms } = harness;
    const course = aCourse();
    lms.setPublished(course.courseId, false);
    lms.quirks.unpublishedCourseRefusal = true;
    await launchAs("dave", course);
    harness.grades.runItemGraded(graded(dave, "run-422", "2030-04-05T10:00:00.000Z"));
    const refused = await eventually(
      async () => (await scoresOf(course, dave))[0],
      (score) => score?.state === "refused",
      { what: "the score refused" },
    );
    expect(refused?.lastError).toMatch(
      /refused a score \(HTTP 422\): Course not available for grading: the course is not published$/,
    );

    const ivan = await harness.browser("ivan");
    const listed = await ivan.get(`/api/lti/scores?lab=${lab}&state=refused`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const shown = listed.body.items.find((item: { id: string }) => item.id === refused!.id);
    expect(shown).toMatchObject({
      labId: lab,
      student: dave,
      courseTitle: "Linux 101",
      platformName: "Test LMS",
      source: "run",
      scoreGiven: 3,
      scoreMaximum: 4,
      state: "refused",
      attempts: 1,
      lastError: refused!.lastError,
      nextAttemptAt: null,
      postedAt: null,
    });
    expect(listed.body.counts.refused).toBeGreaterThanOrEqual(1);
    // A TA may not send grades again; an id that was never a score is not found.
    expect((await (await harness.browser("tara")).post(`/api/lti/scores/${refused!.id}/retry`)).status).toBe(
      403,
    );
    const unknown = await ivan.post(`/api/lti/scores/${"0".repeat(20)}/retry`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.reason).toBe("lti_score_not_found");

    lms.setPublished(course.courseId, true);
    const retried = await ivan.post(`/api/lti/scores/${refused!.id}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ id: refused!.id, state: "pending", attempts: 0 });
    const posted = await eventually(
      () => harness.repository.getScore(refused!.id),
      (score) => score?.state === "posted",
      { what: "the retried score posted" },
    );
    expect(posted?.lastError).toBeNull();
    const [item] = lms.lineItems(course.courseId);
    expect(lms.results(item!.id)).toMatchObject([{ userId: "dave", scoreGiven: 3 }]);
    lms.quirks.unpublishedCourseRefusal = false;

    // Once posted, there is nothing to send again.
    const again = await ivan.post(`/api/lti/scores/${refused!.id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error.reason).toBe("lti_score_not_retryable");
    const [entry] = await harness.auditRepository.list({ action: "lti-score-retry" }, { limit: 10 });
    expect(entry).toMatchObject({
      actor: "ivan",
      labId: lab,
      details: { score: refused!.id, course: refused!.courseId, student: dave, was: "refused" },
    });
  });
});
