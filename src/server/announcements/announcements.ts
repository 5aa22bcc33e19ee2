// Sending, listing and dismissing announcements: the rules of audience.ts applied to the store, and
// the lab's running class looked up at the moment of sending.
import { randomBytes } from "node:crypto";
import type { Announcement, NewAnnouncement } from "../../common/announcements-api.ts";
import type { Me, Session } from "../../common/api.ts";
import { staffSections } from "../access/sections.ts";
import type { ClassRepository } from "../classes/repository.ts";
import { DomainError, labNotFound } from "../errors/domain-error.ts";
import { mayAnnounceTo, shownSince } from "./audience.ts";
import type { AnnouncementRecord, AnnouncementRepository } from "./repository.ts";

export interface AnnouncementsDeps {
  repository: AnnouncementRepository;
  classes: Pick<ClassRepository, "endingAfter">;
  labIds: ReadonlySet<string>;
  now: () => Date;
}

/** A page of the staff list: far more than a class is ever told in a day. */
const staffListLimit = 100;
/** A session shows at most this many at once; more would only push the console off the screen. */
const shownLimit = 10;

/** Lower-case letters and digits, as route parameters check them. */
const newId = () => randomBytes(10).toString("hex");

export class Announcements {
  constructor(private readonly deps: AnnouncementsDeps) {}

  async send(user: Me, labId: string, input: NewAnnouncement): Promise<Announcement> {
    this.checkLab(labId);
    const section = input.section ?? null;
    if (!mayAnnounceTo(user, section)) {
      const own = staffSections(user);
      const sections = own === "any" ? "" : own.join(", ");
      throw new DomainError(
        "forbidden",
        "announce_own_sections",
        `You can announce only to your own sections (${sections}): choose one of them.`,
        { sections },
      );
    }
    const now = this.deps.now().getTime();
    const record: AnnouncementRecord = {
      id: newId(),
      labId,
      section,
      classId: await this.runningClass(labId, now),
      author: user.username,
      text: input.text,
      createdAt: now,
    };
    await this.deps.repository.add(record);
    return toAnnouncement(record);
  }

  /** What staff see of a lab: all of it, or for a TA with sections what reaches their students. */
  async listForStaff(user: Me, labId: string): Promise<Announcement[]> {
    this.checkLab(labId);
    const sections = staffSections(user);
    const records = await this.deps.repository.listForLab(labId, {
      sections: sections === "any" ? undefined : sections,
      limit: staffListLimit,
    });
    return records.map(toAnnouncement);
  }

  /** What the session's owner is shown and has not dismissed. */
  async shownTo(session: Session): Promise<Announcement[]> {
    const records = await this.deps.repository.shownTo({
      labId: session.labId,
      section: session.section,
      since: shownSince(Date.parse(session.createdAt), this.deps.now().getTime()),
      username: session.owner,
      limit: shownLimit,
    });
    return records.map(toAnnouncement);
  }

  /** Dismissed for the owner in all their sessions; one they were never sent does not exist for them. */
  async dismiss(session: Session, id: string): Promise<void> {
    const record = await this.deps.repository.get(id);
    const theirs =
      record?.labId === session.labId && (record.section === null || record.section === session.section);
    if (!theirs) {
      throw new DomainError("not_found", "announcement_not_found", `There is no announcement ${id}.`, { id });
    }
    await this.deps.repository.dismiss(id, session.owner, this.deps.now().getTime());
  }

  private checkLab(labId: string): void {
    if (!this.deps.labIds.has(labId)) throw labNotFound(labId);
  }

  /** The lab's scheduled class under way at `time`; of overlapping ones, the one that started first. */
  private async runningClass(labId: string, time: number): Promise<string | null> {
    const current = await this.deps.classes.endingAfter(time);
    return current.find((each) => each.labId === labId && each.startsAt <= time)?.id ?? null;
  }
}

function toAnnouncement(record: AnnouncementRecord): Announcement {
  return { ...record, createdAt: new Date(record.createdAt).toISOString() };
}
