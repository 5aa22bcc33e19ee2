// The LTI grades API, for instructors: the courses launched from, their rosters (and reading one
// from the LMS now), the score outbox, and sending a refused score again (unless another score of the
// same student outranks it: 409). Thin: parse, call the store or the roster sync, map the LMS's
// failures to 502 with its words.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import type { LtiCourse, LtiCourseList, LtiRoster, LtiScore, LtiScoreList } from "../../../common/lti-api.ts";
import { LtiScoreState, ltiScoreStates } from "../../../common/lti-api.ts";
import { signedInUser } from "../../access/policy.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import { DomainError } from "../../errors/domain-error.ts";
import { HttpError, parseOrThrow } from "../../http/errors.ts";
import { LabIdParams } from "../../http/params.ts";
import type { PlatformDirectory } from "../model/model.ts";
import { courseIdPattern } from "./course-id.ts";
import { LmsError } from "./lms-http.ts";
import type { CourseRecord, LtiGradesRepository, ScoreRecord } from "./repository.ts";
import type { RosterSync } from "./roster-sync.ts";

export interface LtiGradesRouteDeps {
  repository: LtiGradesRepository;
  platforms: PlatformDirectory;
  rosters: Pick<RosterSync, "sync">;
  audit: AuditLog;
  outbox: { wake(): void };
  now: () => Date;
}

const CourseParams = z.object({ id: z.string().check(z.regex(courseIdPattern, "not a course id")) });
const ScoreParams = z.object({ id: z.string().check(z.regex(/^[a-f0-9]{20}$/, "not a score id")) });
const ScoreQuery = z.object({
  lab: z.optional(LabIdParams.shape.labId),
  state: z.optional(LtiScoreState),
});

/** The newest scores an instructor is shown; older ones stay in the store. */
const scoreListLimit = 500;

export function registerLtiGradesRoutes(app: FastifyInstance, deps: LtiGradesRouteDeps): void {
  const { repository, platforms, audit } = deps;
  const instructor = { config: { access: "instructor" } } as const;

  const platformName = (id: string) => platforms.get(id)?.name ?? id;
  const toCourse = (course: CourseRecord, members: number): LtiCourse => ({
    id: course.id,
    platformId: course.platformId,
    platformName: platformName(course.platformId),
    contextId: course.contextId,
    title: course.title,
    hasRoster: course.membershipsUrl !== null,
    rosterSyncedAt: course.rosterSyncedAt,
    members,
  });
  const findCourse = async (id: string) => {
    const course = await repository.getCourse(id);
    if (!course) {
      throw new DomainError("not_found", "lti_course_not_found", `There is no LTI course ${id}.`, { id });
    }
    return course;
  };
  const roster = async (course: CourseRecord): Promise<LtiRoster> => {
    const members = await repository.roster(course.id);
    return { course: toCourse(course, members.length), members };
  };

  app.get("/api/lti/courses", instructor, async (): Promise<LtiCourseList> => {
    const courses = await repository.listCourses();
    return { items: courses.map((course) => toCourse(course, course.members)) };
  });

  app.get("/api/lti/courses/:id/roster", instructor, async (request): Promise<LtiRoster> => {
    const { id } = parseOrThrow(CourseParams, request.params);
    return roster(await findCourse(id));
  });

  app.post("/api/lti/courses/:id/roster", instructor, async (request): Promise<LtiRoster> => {
    const user = signedInUser(request);
    const { id } = parseOrThrow(CourseParams, request.params);
    let synced: { members: number; unreadable: number };
    try {
      synced = await deps.rosters.sync(id);
    } catch (error) {
      if (!(error instanceof LmsError)) throw error;
      // The LMS's own words: the instructor is the one who can act on them (grant a scope, publish).
      throw new HttpError(
        502,
        "lms_error",
        `The LMS could not give the roster: ${error.message}`,
        "lti_lms_failed",
        { message: error.message },
      );
    }
    await audit.record(
      { action: "lti-roster-sync", actor: user, details: { course: id, members: synced.members } },
      request,
    );
    return roster(await findCourse(id));
  });

  app.get("/api/lti/scores", instructor, async (request): Promise<LtiScoreList> => {
    const query = parseOrThrow(ScoreQuery, request.query);
    const [scores, counts, courses] = await Promise.all([
      repository.listScores(
        { labId: query.lab, states: query.state ? [query.state] : ltiScoreStates },
        scoreListLimit,
      ),
      repository.countScores({ labId: query.lab }),
      repository.listCourses(),
    ]);
    const byId = new Map(courses.map((course) => [course.id, course]));
    return {
      items: scores.filter(isShown).map((score) => toScore(score, byId.get(score.courseId), platformName)),
      counts: { pending: counts.pending, posted: counts.posted, refused: counts.refused },
    };
  });

  app.post("/api/lti/scores/:id/retry", instructor, async (request): Promise<LtiScore> => {
    const user = signedInUser(request);
    const { id } = parseOrThrow(ScoreParams, request.params);
    const before = await repository.getScore(id);
    if (!before) {
      throw new DomainError("not_found", "lti_score_not_found", `There is no score ${id} to send.`, { id });
    }
    const superseded = () =>
      new DomainError(
        "conflict",
        "lti_score_superseded",
        `${before.username} has a later score for ${before.labId}, or one from a grading run, in the ` +
          `gradebook or on its way there; the score ${id} would replace it, so it was not sent.`,
        { student: before.username, lab: before.labId },
      );
    if (before.state === "superseded") throw superseded();
    if (before.state === "posted") {
      throw new DomainError(
        "conflict",
        "lti_score_not_retryable",
        `The score ${id} is already in the gradebook.`,
        { state: before.state },
      );
    }
    const after = (await repository.retryScore(id, deps.now().toISOString())) ?? before;
    deps.outbox.wake();
    await audit.record(
      {
        action: "lti-score-retry",
        actor: user,
        labId: before.labId,
        details: {
          score: id,
          course: before.courseId,
          student: before.username,
          was: before.state,
          became: after.state,
        },
      },
      request,
    );
    if (!isShown(after)) throw superseded();
    return toScore(after, await repository.getCourse(before.courseId), platformName);
  });
}

type ShownScore = ScoreRecord & { state: LtiScoreState };

/** The states the API shows: a superseded score was never going to be sent, and is left out. */
function isShown(score: ScoreRecord): score is ShownScore {
  return score.state !== "superseded";
}

function toScore(
  score: ShownScore,
  course: CourseRecord | undefined,
  platformName: (id: string) => string,
): LtiScore {
  return {
    id: score.id,
    labId: score.labId,
    student: score.username,
    courseId: score.courseId,
    courseTitle: course?.title ?? null,
    platformName: platformName(course?.platformId ?? ""),
    source: score.source,
    scoreGiven: score.scoreGiven,
    scoreMaximum: score.scoreMaximum,
    gradedAt: score.gradedAt,
    state: score.state,
    attempts: score.attempts,
    lastError: score.lastError,
    nextAttemptAt: score.nextAttemptAt,
    postedAt: score.postedAt,
  };
}
