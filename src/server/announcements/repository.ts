// Where announcements and their dismissals are kept: every replica answers students' polls from it,
// and they outlive restarts with the class they were sent in. Async throughout so that SQLite and
// PostgreSQL fit the same interface.

export interface AnnouncementRecord {
  id: string;
  labId: string;
  /** null: the whole lab. */
  section: string | null;
  /** The lab's scheduled class running when it was sent, or null. */
  classId: string | null;
  author: string;
  text: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** What one student's session is shown. */
export interface StudentView {
  labId: string;
  /** The session's section: announcements to it and to the whole lab; null: the whole lab's only. */
  section: string | null;
  /** Created at or after this (milliseconds since the epoch). */
  since: number;
  /** Their own dismissals hide announcements. */
  username: string;
  limit: number;
}

export interface AnnouncementRepository {
  add(record: AnnouncementRecord): Promise<void>;
  get(id: string): Promise<AnnouncementRecord | undefined>;
  /**
   * A lab's announcements, newest first. With `sections`, only those to the whole lab or to one of
   * them (what a TA of those sections reaches).
   */
  listForLab(
    labId: string,
    options: { sections?: readonly string[]; limit: number },
  ): Promise<AnnouncementRecord[]>;
  /** The announcements a student is shown and has not dismissed, newest first. */
  shownTo(view: StudentView): Promise<AnnouncementRecord[]>;
  /** Marks it dismissed by `username`; once is enough, again changes nothing. */
  dismiss(id: string, username: string, at: number): Promise<void>;
  close(): Promise<void>;
}
