// What every LtiGradesRepository must do, as a suite any backend runs with its own harness.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../../db/testing/repository-harness.ts";
import { courseId } from "../course-id.ts";
import type {
  CourseUpdate,
  LinkRecord,
  LtiGradesRepository,
  NewScore,
  RosterMemberRecord,
} from "../repository.ts";

const canvas = courseId("canvas", "course-101");
const moodle = courseId("moodle", "42");

export function aCourse(overrides: Partial<CourseUpdate> = {}): CourseUpdate {
  return {
    id: canvas,
    platformId: "canvas",
    contextId: "course-101",
    title: "Linux 101",
    membershipsUrl: "https://canvas.example/api/lti/courses/101/names_and_roles",
    lineItemsUrl: "https://canvas.example/api/lti/courses/101/line_items",
    ...overrides,
  };
}

export function aLink(overrides: Partial<LinkRecord> = {}): LinkRecord {
  return {
    courseId: canvas,
    labId: "linux-basics",
    username: "alice@school.example",
    userId: "canvas-user-7",
    resourceLinkId: "link-1",
    postSelfChecks: false,
    updatedAt: "2030-03-01T09:00:00.000Z",
    ...overrides,
  };
}

export function aScore(overrides: Partial<NewScore> = {}): NewScore {
  return {
    id: "s1",
    courseId: canvas,
    labId: "linux-basics",
    username: "alice@school.example",
    userId: "canvas-user-7",
    source: "run",
    sourceId: "run-1:linux-basics-alice001",
    scoreGiven: 7.5,
    scoreMaximum: 10,
    gradedAt: "2030-03-01T10:00:00.123Z",
    createdAt: "2030-03-01T10:00:01.000Z",
    ...overrides,
  };
}

export function aMember(overrides: Partial<RosterMemberRecord> = {}): RosterMemberRecord {
  return {
    userId: "canvas-user-7",
    username: "alice@school.example",
    name: "Alice Liddell",
    email: "alice@school.example",
    role: "student",
    sections: ["tue-2pm"],
    status: "Active",
    ...overrides,
  };
}

const ids = (scores: { id: string }[]) => scores.map((score) => score.id);

export function describeLtiGradesRepositoryContract(
  backend: string,
  createHarness: () => Promise<RepositoryHarness<LtiGradesRepository>>,
): void {
  describe(`the ${backend} LTI grades store`, () => {
    let harness: RepositoryHarness<LtiGradesRepository>;
    let repository: LtiGradesRepository;
    beforeEach(async () => {
      harness = await createHarness();
      repository = harness.repository;
      await repository.saveCourse(aCourse());
      await repository.saveCourse(
        aCourse({ id: moodle, platformId: "moodle", contextId: "42", title: "Git", lineItemsUrl: null }),
      );
    });
    afterEach(() => harness.cleanup());

    it("keeps courses across a restart, and a launch that leaves something out keeps what was known", async () => {
      await repository.saveCourse(
        aCourse({ title: null, membershipsUrl: null, lineItemsUrl: "https://canvas.example/v2/line_items" }),
      );
      const reopened = await harness.reopen();
      expect(await reopened.getCourse(canvas)).toEqual({
        ...aCourse({ lineItemsUrl: "https://canvas.example/v2/line_items" }),
        rosterSyncedAt: null,
      });
      expect(await reopened.getCourse("000000000000000000000000")).toBeUndefined();
      expect((await reopened.listCourses()).map((course) => [course.title, course.members])).toEqual([
        ["Git", 0],
        ["Linux 101", 0],
      ]);
    });

    it("keeps one link per course, lab and person, the latest launch's", async () => {
      await repository.saveLink(aLink());
      await repository.saveLink(
        aLink({ resourceLinkId: "link-2", postSelfChecks: true, updatedAt: "2030-03-02T09:00:00.000Z" }),
      );
      await repository.saveLink(aLink({ courseId: moodle, userId: "moodle-3" }));
      await repository.saveLink(aLink({ labId: "git-workflow" }));
      await repository.saveLink(aLink({ username: "bob@school.example", labId: "vim" }));
      const reopened = await harness.reopen();
      expect(await reopened.linksOf("alice@school.example", "linux-basics")).toEqual(
        [
          aLink({ resourceLinkId: "link-2", postSelfChecks: true, updatedAt: "2030-03-02T09:00:00.000Z" }),
          aLink({ courseId: moodle, userId: "moodle-3" }),
        ].sort((a, b) => (a.courseId < b.courseId ? -1 : 1)),
      );
      expect(await reopened.linksOf("carol@school.example", "linux-basics")).toEqual([]);
      expect(await reopened.linkedLabs()).toEqual(["git-workflow", "linux-basics", "vim"]);
    });

    it("keeps one line item per course and lab, the first one set, until it is forgotten", async () => {
      const item = (url: string, courseId = canvas) => ({ courseId, labId: "linux-basics", url });
      expect(await repository.lineItem(canvas, "linux-basics")).toBeUndefined();
      expect(await repository.addLineItem(item("https://lms/li/1"))).toBe("https://lms/li/1");
      // Another link to the lab in the same course, naming its own column: the first stays.
      expect(await repository.addLineItem(item("https://lms/li/2"))).toBe("https://lms/li/1");
      expect(await repository.addLineItem(item("https://lms/li/3", moodle))).toBe("https://lms/li/3");
      const reopened = await harness.reopen();
      expect(await reopened.lineItem(canvas, "linux-basics")).toBe("https://lms/li/1");
      expect(await reopened.lineItem(moodle, "linux-basics")).toBe("https://lms/li/3");
      expect(await reopened.lineItem(canvas, "git-workflow")).toBeUndefined();

      // Forgetting one that was replaced meanwhile leaves the replacement.
      await reopened.forgetLineItem(item("https://lms/li/2"));
      expect(await reopened.lineItem(canvas, "linux-basics")).toBe("https://lms/li/1");
      await reopened.forgetLineItem(item("https://lms/li/1"));
      expect(await reopened.lineItem(canvas, "linux-basics")).toBeUndefined();
      expect(await reopened.addLineItem(item("https://lms/li/4"))).toBe("https://lms/li/4");
      expect(await reopened.lineItem(moodle, "linux-basics")).toBe("https://lms/li/3");
    });

    it("enqueues a score once: the same source again changes nothing", async () => {
      const first = await repository.enqueueScore(aScore());
      expect(first).toEqual({
        enqueued: true,
        score: {
          ...aScore(),
          state: "pending",
          attempts: 0,
          nextAttemptAt: aScore().createdAt,
          lastError: null,
          postedAt: null,
        },
      });
      const again = await repository.enqueueScore(aScore({ id: "s2", scoreGiven: 1 }));
      expect(again).toEqual({ enqueued: false, score: first.score });
      // The same result for another course is another score.
      expect((await repository.enqueueScore(aScore({ id: "s3", courseId: moodle }))).enqueued).toBe(true);
      const reopened = await harness.reopen();
      expect(await reopened.getScore("s1")).toEqual(first.score);
      expect(await reopened.getScore("s2")).toBeUndefined();
      expect(await reopened.countScores({})).toEqual({ pending: 2, posted: 0, refused: 0, superseded: 0 });
    });

    it("supersedes pending scores graded before a new one, and a new one graded before another", async () => {
      await repository.enqueueScore(aScore({ id: "old", gradedAt: "2030-03-01T10:00:00.000Z" }));
      await repository.enqueueScore(
        aScore({ id: "posted", sourceId: "r0:s", gradedAt: "2030-03-01T09:00:00.000Z" }),
      );
      await repository.markPosted("posted", "2030-03-01T09:00:05.000Z");
      await repository.enqueueScore(
        aScore({ id: "new", sourceId: "r2:s", gradedAt: "2030-03-01T11:00:00.000Z" }),
      );
      // Reconciled late: a result graded before "new" never goes out after it.
      await repository.enqueueScore(
        aScore({ id: "late", sourceId: "r1:s", gradedAt: "2030-03-01T10:30:00.000Z" }),
      );
      // Another person's and another lab's stay as they are.
      await repository.enqueueScore(aScore({ id: "bob", sourceId: "r1:b", username: "bob@school.example" }));
      await repository.enqueueScore(aScore({ id: "git", sourceId: "r1:g", labId: "git-workflow" }));
      const states = async () =>
        Object.fromEntries(
          await Promise.all(
            ["old", "posted", "new", "late", "bob", "git"].map(async (id) => [
              id,
              (await repository.getScore(id))?.state,
            ]),
          ),
        );
      expect(await states()).toEqual({
        old: "superseded",
        posted: "posted",
        new: "pending",
        late: "superseded",
        bob: "pending",
        git: "pending",
      });
      expect((await repository.getScore("old"))?.nextAttemptAt).toBeNull();
    });

    it("ranks a run's score above any self-check: one never supersedes the other", async () => {
      const selfCheck = (id: string, gradedAt: string) =>
        aScore({ id, source: "self-check", sourceId: id, gradedAt });
      await repository.enqueueScore(selfCheck("check-early", "2030-03-01T09:00:00.000Z"));
      await repository.enqueueScore(selfCheck("check-before", "2030-03-01T09:30:00.000Z"));
      await repository.enqueueScore(aScore({ id: "run", gradedAt: "2030-03-01T10:00:00.000Z" }));
      await repository.markPosted("run", "2030-03-01T10:00:05.000Z");
      // Taken after the run: the run's score stays the grade.
      await repository.enqueueScore(selfCheck("check-after", "2030-03-01T11:00:00.000Z"));
      const states = async () =>
        Object.fromEntries(
          await Promise.all(
            ["check-early", "check-before", "run", "check-after"].map(async (id) => [
              id,
              (await repository.getScore(id))?.state,
            ]),
          ),
        );
      expect(await states()).toEqual({
        "check-early": "superseded",
        "check-before": "superseded",
        run: "posted",
        "check-after": "superseded",
      });

      // A run's score enqueued late (reconciled after a crash) still outranks a newer self-check.
      await repository.enqueueScore(
        aScore({
          id: "bob-check",
          username: "bob",
          source: "self-check",
          sourceId: "c",
          gradedAt: "2030-03-01T11:00:00.000Z",
        }),
      );
      await repository.enqueueScore(
        aScore({ id: "bob-run", username: "bob", sourceId: "r:b", gradedAt: "2030-03-01T10:00:00.000Z" }),
      );
      expect((await repository.getScore("bob-check"))?.state).toBe("superseded");
      expect((await repository.getScore("bob-run"))?.state).toBe("pending");
    });

    it("supersedes a retried score that a pending or posted one outranks, rather than sending it", async () => {
      const at = (hour: number) => `2030-03-01T${hour}:00:00.000Z`;
      await repository.enqueueScore(aScore({ id: "old", sourceId: "r1:s", gradedAt: at(10) }));
      await repository.markRefused("old", { error: "Course is not published" });
      await repository.enqueueScore(aScore({ id: "new", sourceId: "r2:s", gradedAt: at(11) }));
      // Pending newer: the older refused one would be refused as older, or roll the grade back.
      expect(await repository.retryScore("old", "2030-03-02T08:00:00.000Z")).toMatchObject({
        state: "superseded",
        nextAttemptAt: null,
        lastError: "Course is not published",
      });

      await repository.enqueueScore(
        aScore({ id: "b-old", username: "bob", sourceId: "r1:b", gradedAt: at(10) }),
      );
      await repository.markRefused("b-old", { error: "no" });
      await repository.enqueueScore(
        aScore({ id: "b-new", username: "bob", sourceId: "r2:b", gradedAt: at(11) }),
      );
      await repository.markPosted("b-new", "2030-03-01T11:00:01.000Z");
      expect((await repository.retryScore("b-old", "2030-03-02T08:00:00.000Z"))?.state).toBe("superseded");

      // A newer one refused too does not stop the older: neither is in the gradebook.
      await repository.enqueueScore(
        aScore({ id: "c-old", username: "carol", sourceId: "r1:c", gradedAt: at(10) }),
      );
      await repository.markRefused("c-old", { error: "no" });
      await repository.enqueueScore(
        aScore({ id: "c-new", username: "carol", sourceId: "r2:c", gradedAt: at(11) }),
      );
      await repository.markRefused("c-new", { error: "no" });
      expect((await repository.retryScore("c-old", "2030-03-02T08:00:00.000Z"))?.state).toBe("pending");
      // Sent again, the newer supersedes the older still waiting, as a new score would.
      expect((await repository.retryScore("c-new", "2030-03-02T08:00:01.000Z"))?.state).toBe("pending");
      expect((await repository.getScore("c-old"))?.state).toBe("superseded");
      // A posted one outranked stays posted.
      expect((await repository.retryScore("b-new", "2030-03-02T08:00:00.000Z"))?.state).toBe("posted");

      // A self-check is outranked by a run's score of any time.
      await repository.enqueueScore(
        aScore({ id: "d-check", username: "dave", source: "self-check", sourceId: "d", gradedAt: at(12) }),
      );
      await repository.markRefused("d-check", { error: "no" });
      await repository.enqueueScore(
        aScore({ id: "d-run", username: "dave", sourceId: "r1:d", gradedAt: at(10) }),
      );
      expect((await repository.retryScore("d-check", "2030-03-02T08:00:00.000Z"))?.state).toBe("superseded");
    });

    it("hands out due pending scores oldest first, up to the limit", async () => {
      await repository.enqueueScore(aScore({ id: "b", createdAt: "2030-03-01T10:00:02.000Z" }));
      await repository.enqueueScore(
        aScore({ id: "a", sourceId: "x", username: "bob", createdAt: "2030-03-01T10:00:01.000Z" }),
      );
      await repository.enqueueScore(
        aScore({ id: "c", sourceId: "y", username: "carol", createdAt: "2030-03-01T10:00:03.000Z" }),
      );
      await repository.markRetry("c", { error: "503", nextAttemptAt: "2030-03-01T10:05:00.000Z" });
      expect(ids(await repository.dueScores("2030-03-01T10:01:00.000Z", 10))).toEqual(["a", "b"]);
      expect(ids(await repository.dueScores("2030-03-01T10:01:00.000Z", 1))).toEqual(["a"]);
      expect(ids(await repository.dueScores("2030-03-01T10:05:00.000Z", 10))).toEqual(["a", "b", "c"]);
      expect(await repository.dueScores("2030-03-01T10:00:00.000Z", 10)).toEqual([]);
    });

    it("records posting, retrying and refusing, and an instructor's retry of a refused score", async () => {
      await repository.enqueueScore(aScore({ id: "ok" }));
      await repository.enqueueScore(aScore({ id: "flaky", sourceId: "f", username: "bob" }));
      await repository.enqueueScore(aScore({ id: "no", sourceId: "n", username: "carol" }));
      await repository.markPosted("ok", "2030-03-01T10:00:02.000Z");
      await repository.markRetry("flaky", {
        error: "The LMS answered 503: down",
        nextAttemptAt: "2030-03-01T10:00:31.000Z",
      });
      await repository.markRetry("flaky", {
        error: "The LMS answered 503: still down",
        nextAttemptAt: "2030-03-01T10:01:31.000Z",
      });
      await repository.markRefused("no", { error: "Course is not published" });
      // A finished score is not touched by a late failure.
      await repository.markRefused("ok", { error: "too late" });
      await repository.markRetry("no", { error: "too late", nextAttemptAt: "2030-03-01T10:00:00.000Z" });

      const reopened = await harness.reopen();
      expect(await reopened.getScore("ok")).toMatchObject({
        state: "posted",
        attempts: 1,
        postedAt: "2030-03-01T10:00:02.000Z",
        nextAttemptAt: null,
        lastError: null,
      });
      expect(await reopened.getScore("flaky")).toMatchObject({
        state: "pending",
        attempts: 2,
        lastError: "The LMS answered 503: still down",
        nextAttemptAt: "2030-03-01T10:01:31.000Z",
      });
      expect(await reopened.getScore("no")).toMatchObject({
        state: "refused",
        attempts: 1,
        lastError: "Course is not published",
        nextAttemptAt: null,
      });

      expect(await reopened.retryScore("no", "2030-03-02T08:00:00.000Z")).toMatchObject({
        state: "pending",
        attempts: 0,
        nextAttemptAt: "2030-03-02T08:00:00.000Z",
        lastError: "Course is not published",
      });
      expect(await reopened.retryScore("ok", "2030-03-02T08:00:00.000Z")).toMatchObject({ state: "posted" });
      expect(await reopened.retryScore("none", "2030-03-02T08:00:00.000Z")).toBeUndefined();
    });

    it("records a score posted even when it was superseded while in flight", async () => {
      await repository.enqueueScore(aScore({ id: "in-flight", gradedAt: "2030-03-01T10:00:00.000Z" }));
      await repository.enqueueScore(
        aScore({ id: "newer", sourceId: "r2:s", gradedAt: "2030-03-01T11:00:00.000Z" }),
      );
      await repository.markPosted("in-flight", "2030-03-01T11:00:01.000Z");
      expect((await repository.getScore("in-flight"))?.state).toBe("posted");
    });

    it("lists scores newest first by lab and state, and counts them by state", async () => {
      await repository.enqueueScore(aScore({ id: "1", createdAt: "2030-03-01T10:00:01.000Z" }));
      await repository.enqueueScore(
        aScore({ id: "2", sourceId: "b", username: "bob", createdAt: "2030-03-01T10:00:02.000Z" }),
      );
      await repository.enqueueScore(
        aScore({ id: "3", sourceId: "g", labId: "git-workflow", createdAt: "2030-03-01T10:00:03.000Z" }),
      );
      await repository.markRefused("2", { error: "no" });
      await repository.enqueueScore(
        aScore({
          id: "4",
          sourceId: "h",
          gradedAt: "2030-03-01T09:00:00.000Z",
          createdAt: "2030-03-01T10:00:04.000Z",
        }),
      );
      const shown = ["pending", "posted", "refused"] as const;
      expect(ids(await repository.listScores({ states: shown }, 10))).toEqual(["3", "2", "1"]);
      expect(ids(await repository.listScores({ states: [...shown, "superseded"] }, 10))).toEqual([
        "4",
        "3",
        "2",
        "1",
      ]);
      expect(ids(await repository.listScores({ states: shown }, 2))).toEqual(["3", "2"]);
      expect(ids(await repository.listScores({ labId: "linux-basics", states: shown }, 10))).toEqual([
        "2",
        "1",
      ]);
      expect(ids(await repository.listScores({ labId: "linux-basics", states: ["pending"] }, 10))).toEqual([
        "1",
      ]);
      expect(ids(await repository.listScores({ states: ["refused"] }, 10))).toEqual(["2"]);
      expect(await repository.countScores({ labId: "linux-basics" })).toEqual({
        pending: 1,
        posted: 0,
        refused: 1,
        superseded: 1,
      });
    });

    it("replaces a course's roster whole, and reads a member's sections", async () => {
      await repository.replaceRoster(
        canvas,
        [aMember({ userId: "old", name: "Gone" })],
        "2030-03-01T08:00:00.000Z",
      );
      const members = [
        aMember(),
        aMember({
          userId: "canvas-user-9",
          username: null,
          name: null,
          email: null,
          role: null,
          sections: [],
          status: "Inactive",
        }),
        aMember({ userId: "canvas-user-8", name: "Bob", role: "ta", sections: ["tue-2pm", "wed-9am"] }),
      ];
      await repository.replaceRoster(canvas, members, "2030-03-01T09:00:00.000Z");
      const reopened = await harness.reopen();
      expect(await reopened.roster(canvas)).toEqual([members[0], members[2], members[1]]);
      expect(await reopened.roster(moodle)).toEqual([]);
      expect(await reopened.sectionsOf(canvas, "canvas-user-8")).toEqual(["tue-2pm", "wed-9am"]);
      expect(await reopened.sectionsOf(canvas, "old")).toEqual([]);
      expect(await reopened.sectionsOf(moodle, "canvas-user-8")).toEqual([]);
      expect((await reopened.getCourse(canvas))?.rosterSyncedAt).toBe("2030-03-01T09:00:00.000Z");
      expect((await reopened.listCourses()).find((course) => course.id === canvas)?.members).toBe(3);
    });

    it("refuses a link, a line item or a score for a course it does not know", async () => {
      const unknown = courseId("nowhere", "x");
      await expect(repository.saveLink(aLink({ courseId: unknown }))).rejects.toThrow();
      await expect(
        repository.addLineItem({ courseId: unknown, labId: "linux-basics", url: "https://lms/li" }),
      ).rejects.toThrow();
      await expect(repository.enqueueScore(aScore({ courseId: unknown }))).rejects.toThrow();
      expect(await repository.countScores({})).toEqual({ pending: 0, posted: 0, refused: 0, superseded: 0 });
    });
  });
}
