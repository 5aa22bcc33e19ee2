// The outbox worker: takes the scores that are due, oldest first, and posts each to its course's
// line item. Run as a coordination duty ("lab-console-lti-outbox"), so one replica posts at a time;
// it wakes when a score is enqueued here and every few seconds for those enqueued elsewhere.
//
// What becomes of a score:
// - the LMS took it (2xx): posted;
// - the LMS has no such line item (404: the instructor deleted the column): the stored one is
//   forgotten and the score posted at once to the one found or made instead (line-items.ts);
// - no answer, 408, 429, 5xx, or the token endpoint refused the console: pending, tried again after
//   a backoff (backoff.ts, Retry-After honoured), the error kept for the instructor to read;
// - any other 4xx: refused with the LMS's reason, until an instructor retries it;
// - the worker stopped mid-post (a shutdown, the duty lost): pending and due, untouched.
//
// Never twice in the gradebook: a score is marked posted only after the LMS answered, so a crash or a
// stop between the LMS taking it and the mark sends it again at the next start. That second post
// carries the same userId and the same timestamp (the result's gradedAt, never the time of sending),
// and an AGS platform keeps one result per line item and user, replacing it with a score of the same
// or a later timestamp: the gradebook still shows one result, the same one. A score that outranks a
// pending one of the same person (a later one, or a run's over a self-check: repository.ts) supersedes
// it before it is sent, so the older never lands after the newer.
import type { DutyWork } from "../../replicas/coordination.ts";
import type { PlatformDirectory } from "../model/model.ts";
import type { AgsClient } from "./ags-client.ts";
import { retryDelayMs, type Backoff } from "./backoff.ts";
import { NoLineItemsError, type LineItems } from "./line-items.ts";
import { LmsError } from "./lms-http.ts";
import type { LtiGradesRepository, ScoreRecord } from "./repository.ts";
import { TokenError } from "./service-token.ts";

export interface ScoreOutboxDeps {
  repository: Pick<
    LtiGradesRepository,
    "dueScores" | "getCourse" | "linksOf" | "markPosted" | "markRetry" | "markRefused"
  >;
  platforms: PlatformDirectory;
  ags: Pick<AgsClient, "postScore">;
  lineItems: Pick<LineItems, "ensure" | "forget">;
  backoff: Backoff;
  now: () => Date;
  log: { warn(object: object, message: string): void };
  /** How often the worker looks for scores enqueued on other replicas or come due. Default 5 s. */
  pollMs?: number;
  /** Run once each time the duty is taken, before the first pass. */
  onStart?: () => Promise<void>;
}

/** Scores read per query: a class's worth, so a pass over a big backlog stays a few queries. */
const batch = 50;

export class ScoreOutbox implements DutyWork {
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private wokenWhileRunning = false;
  private posting = new AbortController();

  constructor(private readonly deps: ScoreOutboxDeps) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.posting = new AbortController();
    const onStart = this.deps.onStart;
    this.running = (onStart ? onStart() : Promise.resolve())
      .catch((error: unknown) => this.deps.log.warn({ err: error }, "LTI outbox: preparing failed"))
      .finally(() => {
        this.running = undefined;
        this.schedule(0);
      });
  }

  /** A score was enqueued: look now rather than at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wokenWhileRunning = true;
      return;
    }
    this.schedule(0);
  }

  /** Abandons the posts in flight (they stay pending) and resolves once the pass has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.posting.abort(new Error("The LTI outbox is stopping."));
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.wokenWhileRunning = false;
      this.running = this.pass()
        .catch((error: unknown) => this.deps.log.warn({ err: error }, "LTI outbox: a pass failed"))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.wokenWhileRunning ? 0 : (this.deps.pollMs ?? 5_000));
        });
    }, delayMs);
  }

  /** Sends what is due until nothing is; a platform that fails once is not asked again this pass. */
  private async pass(): Promise<void> {
    const signal = this.posting.signal;
    const down = new Map<string, LmsError>();
    while (!signal.aborted) {
      const due = await this.deps.repository.dueScores(this.deps.now().toISOString(), batch);
      if (due.length === 0) return;
      for (const score of due) {
        if (signal.aborted) return;
        await this.send(score, signal, down);
      }
    }
  }

  private async send(score: ScoreRecord, signal: AbortSignal, down: Map<string, LmsError>): Promise<void> {
    const { repository } = this.deps;
    const course = await repository.getCourse(score.courseId);
    const platform = course && this.deps.platforms.get(course.platformId);
    if (!course || !platform || platform.status !== "active") {
      await repository.markRefused(score.id, {
        error: `The platform ${course?.platformId ?? "of this course"} is no longer configured or approved.`,
      });
      return;
    }
    const failedBefore = down.get(platform.id);
    if (failedBefore) {
      // Asking a platform that is down again would cost a timeout per score: each waits its turn.
      await this.retryLater(score, failedBefore);
      return;
    }
    try {
      const [link] = (await repository.linksOf(score.username, score.labId)).filter(
        (each) => each.courseId === score.courseId,
      );
      const request = {
        course,
        platform,
        labId: score.labId,
        scoreMaximum: score.scoreMaximum,
        resourceLinkId: link?.resourceLinkId,
        signal,
      };
      const post = async (lineItem: URL) =>
        this.deps.ags.postScore(
          platform,
          lineItem,
          {
            userId: score.userId,
            scoreGiven: score.scoreGiven,
            scoreMaximum: score.scoreMaximum,
            timestamp: score.gradedAt,
          },
          signal,
        );
      const lineItem = await this.deps.lineItems.ensure(request);
      try {
        await post(lineItem);
      } catch (error) {
        const gone = error instanceof LmsError && !(error instanceof TokenError) && error.status === 404;
        if (!gone) throw error;
        // The column is gone (deleted by the instructor): another, found or made, once; a second
        // 404 is the LMS's refusal like any other.
        await this.deps.lineItems.forget(request, lineItem);
        await post(await this.deps.lineItems.ensure(request));
      }
      await repository.markPosted(score.id, this.deps.now().toISOString());
    } catch (error) {
      // Stopping: the post may or may not have reached the LMS; it stays pending and goes again.
      if (signal.aborted) return;
      if (error instanceof NoLineItemsError) {
        await repository.markRefused(score.id, { error: error.message });
      } else if (error instanceof LmsError && !error.transient && !(error instanceof TokenError)) {
        await repository.markRefused(score.id, { error: error.message });
      } else if (error instanceof LmsError) {
        down.set(platform.id, error);
        await this.retryLater(score, error);
      } else {
        this.deps.log.warn({ err: error, score: score.id }, "LTI outbox: sending a score failed");
        await this.retryLater(score, error as Error);
      }
    }
  }

  private async retryLater(score: ScoreRecord, error: Error): Promise<void> {
    const retryAfter = error instanceof LmsError ? error.retryAfterMs : undefined;
    const delay = retryDelayMs(this.deps.backoff, score.attempts + 1, retryAfter);
    await this.deps.repository.markRetry(score.id, {
      error: error.message,
      nextAttemptAt: new Date(this.deps.now().getTime() + delay).toISOString(),
    });
  }
}
