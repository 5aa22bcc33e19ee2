// A course's roster read from its LMS (NRPS) and stored whole in place of the last one: on an
// instructor's launch in the background, or when an instructor asks. One sync per course at a time:
// a second request while one runs waits for it rather than asking the LMS again.
import { DomainError } from "../../errors/domain-error.ts";
import type { PlatformDirectory } from "../model/model.ts";
import type { NrpsClient } from "./nrps-client.ts";
import type { LtiGradesRepository } from "./repository.ts";
import { rosterMembers } from "./roster-members.ts";

export interface RosterSyncDeps {
  repository: Pick<LtiGradesRepository, "getCourse" | "replaceRoster">;
  platforms: PlatformDirectory;
  nrps: Pick<NrpsClient, "members">;
  now: () => Date;
}

export interface RosterSyncResult {
  members: number;
  /** Rows the LMS gave that had no user id or no roles. */
  unreadable: number;
}

export class RosterSync {
  private readonly syncing = new Map<string, Promise<RosterSyncResult>>();

  constructor(private readonly deps: RosterSyncDeps) {}

  /**
   * Rejects with a DomainError when the course is unknown or offers no roster, and with the LmsError
   * of the LMS's failure (nothing stored then: the last roster stays).
   */
  sync(courseId: string, signal?: AbortSignal): Promise<RosterSyncResult> {
    let syncing = this.syncing.get(courseId);
    if (!syncing) {
      syncing = this.syncNow(courseId, signal).finally(() => this.syncing.delete(courseId));
      this.syncing.set(courseId, syncing);
    }
    return syncing;
  }

  private async syncNow(courseId: string, signal: AbortSignal | undefined): Promise<RosterSyncResult> {
    const course = await this.deps.repository.getCourse(courseId);
    if (!course) {
      throw new DomainError("not_found", "lti_course_not_found", `There is no LTI course ${courseId}.`, {
        id: courseId,
      });
    }
    const platform = this.deps.platforms.get(course.platformId);
    if (!course.membershipsUrl || !platform) {
      const title = course.title ?? course.contextId;
      throw new DomainError(
        "conflict",
        "lti_no_roster",
        platform
          ? `${title} has not offered its roster: no launch from it carried the Names and Roles claim. ` +
              "Allow the tool to read the course's members in the LMS, then launch it from the course again."
          : `The platform ${course.platformId} of ${title} is no longer configured.`,
        { course: title },
      );
    }
    const roster = await this.deps.nrps.members(platform, new URL(course.membershipsUrl), signal);
    const members = rosterMembers(platform, roster.members);
    await this.deps.repository.replaceRoster(courseId, members, this.deps.now().toISOString());
    return { members: members.length, unreadable: roster.unreadable };
  }
}
