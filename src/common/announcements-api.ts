// Announcements: staff send a short message to every student of a lab, or of one section of it, and
// it shows on each student's session page until they dismiss it (docs/class-wall.md, "Announcements").
import * as z from "zod/mini";
import { SectionName } from "./api.ts";

/** The longest announcement, in UTF-16 code units, as a textarea's maxLength counts them. */
export const announcementMaxLength = 500;

export const NewAnnouncement = z.object({
  /** Shown exactly as written; only a text of nothing but blanks is refused. */
  text: z.string().check(
    z.maxLength(announcementMaxLength),
    z.refine((text) => text.trim() !== "", "an announcement needs some text"),
  ),
  /** One section of the lab; absent or null: the whole lab. */
  section: z.optional(z.nullable(SectionName)),
});
export type NewAnnouncement = z.output<typeof NewAnnouncement>;

export const Announcement = z.object({
  id: z.string(),
  labId: z.string(),
  /** The section it went to, or null for the whole lab. */
  section: z.nullable(z.string()),
  /** The lab's scheduled class that was running when it was sent, or null outside any class. */
  classId: z.nullable(z.string()),
  author: z.string(),
  text: z.string(),
  createdAt: z.string(),
});
export type Announcement = z.output<typeof Announcement>;

/** Newest first. */
export const AnnouncementList = z.object({ items: z.array(Announcement) });
export type AnnouncementList = z.output<typeof AnnouncementList>;
