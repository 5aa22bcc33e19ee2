// The announcements row as both stores read it, and the record it makes.
import { epochMsOf, type StoredTime } from "../db/column-values.ts";
import type { AnnouncementRecord } from "./repository.ts";

export interface AnnouncementRow {
  id: string;
  lab_id: string;
  section: string | null;
  class_id: string | null;
  author: string;
  text: string;
  created_at: StoredTime;
}

export function toAnnouncement(row: AnnouncementRow): AnnouncementRecord {
  return {
    id: row.id,
    labId: row.lab_id,
    section: row.section,
    classId: row.class_id,
    author: row.author,
    text: row.text,
    createdAt: epochMsOf(row.created_at),
  };
}
