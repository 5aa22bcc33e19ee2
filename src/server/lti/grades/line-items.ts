// The line item a (course, lab) posts its scores to: one per course and lab, created at most once
// (issue 35: duplicated grade columns are what instructors of other tools complain of). In order:
// the one already stored (a launch's AGS claim named it, or this found or made it before); one the
// LMS lists for the lab (resource_id = the lab's id, as this console's deep links and creations set
// it); else a new one. Only the outbox worker calls this, one replica at a time (a coordination
// duty), and one call per (course, lab) at a time here, so two scores never both create one. A
// creation whose answer was lost (a timeout, a restart) is found by the next call's search rather
// than made again, since it carries the lab's id as its resourceId. The first stored stays (two links
// to the lab in one course do not take turns) until a score post finds it gone from the LMS (the
// instructor deleted the column): the outbox then forgets it and asks here again, once.
import { secureUrl } from "../../http/secure-url.ts";
import type { Platform } from "../model/model.ts";
import type { AgsClient } from "./ags-client.ts";
import type { CourseRecord, LtiGradesRepository } from "./repository.ts";

/** The tag of every line item this console creates, so an instructor can tell them apart. */
export const lineItemTag = "lab-console";

/** The course does not let the console use its line items: not a failure another try would mend. */
export class NoLineItemsError extends Error {
  override readonly name = "NoLineItemsError";
}

export interface LineItemsDeps {
  repository: Pick<LtiGradesRepository, "lineItem" | "addLineItem" | "forgetLineItem">;
  ags: Pick<AgsClient, "findLineItems" | "createLineItem">;
  /** The lab's title, for a line item's label; undefined for a lab no longer configured. */
  labTitle: (labId: string) => string | undefined;
}

export interface LineItemRequest {
  course: CourseRecord;
  platform: Platform;
  labId: string;
  /** For a new line item. */
  scoreMaximum: number;
  /** The link the score came through, to find the line item the LMS tied to it. */
  resourceLinkId: string | undefined;
  signal?: AbortSignal;
}

export class LineItems {
  private readonly ensuring = new Map<string, Promise<URL>>();

  constructor(private readonly deps: LineItemsDeps) {}

  ensure(request: LineItemRequest): Promise<URL> {
    const key = JSON.stringify([request.course.id, request.labId]);
    let ensuring = this.ensuring.get(key);
    if (!ensuring) {
      ensuring = this.findOrCreate(request).finally(() => this.ensuring.delete(key));
      this.ensuring.set(key, ensuring);
    }
    return ensuring;
  }

  /** The LMS no longer has `url`: the next ensure() finds or makes another. */
  async forget(request: Pick<LineItemRequest, "course" | "labId">, url: URL): Promise<void> {
    await this.deps.repository.forgetLineItem({
      courseId: request.course.id,
      labId: request.labId,
      url: url.href,
    });
  }

  private async findOrCreate(request: LineItemRequest): Promise<URL> {
    const { course, platform, labId, signal } = request;
    const stored = await this.deps.repository.lineItem(course.id, labId);
    if (stored) return new URL(stored);
    if (!course.lineItemsUrl) {
      throw new NoLineItemsError(
        `${course.title ?? course.contextId} on ${platform.name} offered no line items service at any launch ` +
          "(its AGS claim named no lineitems URL): the LMS must allow this tool to manage grade columns.",
      );
    }
    const lineItemsUrl = new URL(course.lineItemsUrl);
    const { ags } = this.deps;
    const [found] =
      request.resourceLinkId === undefined
        ? []
        : await ags.findLineItems(
            platform,
            lineItemsUrl,
            { resourceId: labId, resourceLinkId: request.resourceLinkId },
            signal,
          );
    const item =
      found ??
      (await ags.findLineItems(platform, lineItemsUrl, { resourceId: labId }, signal))[0] ??
      (await ags.createLineItem(
        platform,
        lineItemsUrl,
        {
          label: this.deps.labTitle(labId) ?? labId,
          scoreMaximum: request.scoreMaximum,
          resourceId: labId,
          tag: lineItemTag,
        },
        signal,
      ));
    // The bearer token goes to this address with every score: only one that keeps it secret.
    const url = secureUrl().safeParse(item.id);
    if (!url.success) {
      throw new NoLineItemsError(
        `${platform.name} gave the line item of ${labId} an address that is not https (${item.id}): ` +
          "Lab Console sends scores and their access token only over https.",
      );
    }
    return new URL(
      await this.deps.repository.addLineItem({ courseId: course.id, labId, url: url.data.href }),
    );
  }
}
