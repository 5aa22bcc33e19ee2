// The grades side of LTI 1.3 (docs/lti.md, issue 35), as the rest of the BFF sees it: what a launch
// leaves behind (the course, the person's link to the lab, the line item the claim names), the
// scores of grading runs and self-checks put in the outbox for each course the student is linked
// from, the roster read from the LMS, and the routes an instructor follows it all with.
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { SessionResult } from "../../../common/grading.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import type { GradingRepository, SelfCheckRecord } from "../../grading/repository.ts";
import type { DutyWork } from "../../replicas/coordination.ts";
import type { LaunchRecorder, PlatformDirectory, ToolSigner } from "../model/model.ts";
import { AgsClient } from "./ags-client.ts";
import { defaultBackoff, type Backoff } from "./backoff.ts";
import { courseId } from "./course-id.ts";
import { LineItems } from "./line-items.ts";
import { NrpsClient, type NrpsLimits } from "./nrps-client.ts";
import type { LinkRecord, LtiGradesRepository, ScoreSource } from "./repository.ts";
import { RosterSync } from "./roster-sync.ts";
import { registerLtiGradesRoutes } from "./routes.ts";
import { ScoreOutbox } from "./score-outbox.ts";
import { ServiceTokens } from "./service-token.ts";

/** The coordination duty the outbox worker runs as: one replica posts scores at a time. */
export const ltiOutboxLeaseName = "lab-console-lti-outbox";

export interface RunItemGraded {
  runId: string;
  labId: string;
  sessionId: string;
  /** The session's owner: the username a launch linked to the lab. */
  owner: string;
  result: SessionResult;
  gradedAt: string;
}

/** What a launch tells the grades side and asks it (model.ts), and the rest of the BFF's part. */
export interface LtiGrades extends LaunchRecorder {
  /** A grading run's item was graded (owner = username). Never throws; failures are logged. */
  runItemGraded(event: RunItemGraded): void;
  /** A self-check was recorded. Never throws; failures are logged. */
  selfChecked(check: SelfCheckRecord): void;
  register(app: FastifyInstance): void;
  /** The outbox worker: run as the coordination duty ltiOutboxLeaseName. */
  outbox: DutyWork;
  /** Waits for the enqueues and roster syncs under way and stops the outbox; the store stays open. */
  close(): Promise<void>;
}

export interface LtiGradesDeps {
  repository: LtiGradesRepository;
  platforms: PlatformDirectory;
  signer: ToolSigner;
  /** Each student's latest result per lab: the runs' results the outbox catches up on at start. */
  grading: Pick<GradingRepository, "latestResults">;
  labs: readonly { id: string; title: string }[];
  audit: AuditLog;
  now: () => Date;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
  /** Tests shorten these. */
  backoff?: Backoff;
  outboxPollMs?: number;
  nrpsLimits?: NrpsLimits;
}

/** Lower-case hex, as the score routes' parameters check them. */
const newScoreId = () => randomBytes(10).toString("hex");

export function createLtiGrades(deps: LtiGradesDeps): LtiGrades {
  const { repository, platforms, log } = deps;
  const tokens = new ServiceTokens({ signer: deps.signer, now: () => deps.now().getTime() });
  const ags = new AgsClient(tokens);
  const rosters = new RosterSync({
    repository,
    platforms,
    nrps: new NrpsClient(tokens, deps.nrpsLimits),
    now: deps.now,
  });
  const titles = new Map(deps.labs.map((lab) => [lab.id, lab.title]));
  const lineItems = new LineItems({ repository, ags, labTitle: (labId) => titles.get(labId) });
  const outbox = new ScoreOutbox({
    repository,
    platforms,
    ags,
    lineItems,
    backoff: deps.backoff ?? defaultBackoff,
    now: deps.now,
    log,
    pollMs: deps.outboxPollMs,
    onStart: reconcile,
  });
  /** Enqueues and background syncs under way, so close() can wait for them. */
  const underWay = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>, failed: string) => {
    const tracked = work
      .catch((error: unknown) => log.warn({ err: error }, failed))
      .finally(() => underWay.delete(tracked));
    underWay.add(tracked);
  };

  async function enqueue(
    link: LinkRecord,
    source: ScoreSource,
    sourceId: string,
    result: SessionResult,
  ): Promise<boolean> {
    // An ungradable result has no score, and a lab worth nothing has no scale an LMS accepts.
    if (!result.gradable || result.maxScore <= 0) return false;
    const { enqueued } = await repository.enqueueScore({
      id: newScoreId(),
      courseId: link.courseId,
      labId: link.labId,
      username: link.username,
      userId: link.userId,
      source,
      sourceId,
      scoreGiven: result.score,
      scoreMaximum: result.maxScore,
      // The same instant as stored, in one form: it is the Score's timestamp on every attempt.
      gradedAt: new Date(result.gradedAt).toISOString(),
      createdAt: deps.now().toISOString(),
    });
    if (enqueued) outbox.wake();
    return enqueued;
  }

  async function enqueueRunResult(
    run: { runId: string; labId: string; sessionId: string; owner: string },
    result: SessionResult,
  ) {
    let enqueued = 0;
    for (const link of await repository.linksOf(run.owner, run.labId)) {
      if (await enqueue(link, "run", `${run.runId}:${run.sessionId}`, result)) enqueued += 1;
    }
    return enqueued;
  }

  /**
   * A result recorded in grading.db whose enqueue never happened (the process ended between the two)
   * is enqueued now; one already in the outbox changes nothing. Runs once each time this replica
   * takes the outbox duty, before the first pass.
   */
  async function reconcile(): Promise<void> {
    let caughtUp = 0;
    for (const labId of await repository.linkedLabs()) {
      for (const { runId, result } of await deps.grading.latestResults(labId)) {
        caughtUp += await enqueueRunResult(
          { runId, labId, sessionId: result.sessionId, owner: result.owner },
          result,
        );
      }
    }
    if (caughtUp > 0) log.info({ scores: caughtUp }, "LTI outbox: enqueued run results not yet in it");
  }

  return {
    async recordLaunch(launch) {
      const id = courseId(launch.platform.id, launch.context.id);
      await repository.saveCourse({
        id,
        platformId: launch.platform.id,
        contextId: launch.context.id,
        title: launch.context.title ?? null,
        membershipsUrl: launch.nrps?.membershipsUrl.href ?? null,
        lineItemsUrl: launch.ags?.lineItemsUrl?.href ?? null,
      });
      const { labId, resourceLink } = launch;
      if (labId !== undefined && resourceLink !== undefined) {
        await repository.saveLink({
          courseId: id,
          labId,
          username: launch.username,
          userId: launch.userId,
          resourceLinkId: resourceLink.id,
          postSelfChecks: launch.postSelfChecks,
          updatedAt: deps.now().toISOString(),
        });
      }
      // The first stays: two links to the lab in one course, each naming its own column, would
      // otherwise move the lab's scores from one column to the other at every launch.
      const claimed = launch.ags?.lineItemUrl;
      if (labId !== undefined && claimed !== undefined) {
        await repository.addLineItem({ courseId: id, labId, url: claimed.href });
      }
      if (launch.role === "instructor" && launch.nrps) {
        track(
          rosters.sync(id),
          `LTI roster of ${launch.context.title ?? launch.context.id} could not be read`,
        );
      }
    },

    async sectionsOf(platformId, contextId, userId) {
      return repository.sectionsOf(courseId(platformId, contextId), userId);
    },

    async hasColumn(platformId, contextId, labId) {
      const id = courseId(platformId, contextId);
      if ((await repository.lineItem(id, labId)) !== undefined) return true;
      const course = await repository.getCourse(id);
      const platform = platforms.get(platformId);
      if (!course?.lineItemsUrl || !platform) return false;
      const listed = await ags.findLineItems(platform, new URL(course.lineItemsUrl), { resourceId: labId });
      return listed.length > 0;
    },

    runItemGraded(event) {
      track(
        enqueueRunResult(event, { ...event.result, gradedAt: event.gradedAt }),
        `LTI outbox: the score of ${event.owner} in ${event.runId} was not enqueued`,
      );
    },

    selfChecked(check) {
      track(
        (async () => {
          for (const link of await repository.linksOf(check.owner, check.labId)) {
            if (link.postSelfChecks) await enqueue(link, "self-check", String(check.id), check.result);
          }
        })(),
        `LTI outbox: the self-check ${check.id} of ${check.owner} was not enqueued`,
      );
    },

    register(app) {
      registerLtiGradesRoutes(app, {
        repository,
        platforms,
        rosters,
        audit: deps.audit,
        outbox,
        now: deps.now,
      });
    },

    outbox,

    async close() {
      while (underWay.size > 0) await Promise.all(underWay);
      await outbox.stop();
    },
  };
}
