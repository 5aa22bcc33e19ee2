// AnnouncementRepository on SQLite (announcements.db).
import type { Database, Statement } from "better-sqlite3";
import { sqliteTimeOf } from "../db/column-values.ts";
import { withDatabaseErrors } from "../db/errors.ts";
import { openAnnouncementsDatabase } from "./announcements-database.ts";
import type { AnnouncementRecord, AnnouncementRepository, StudentView } from "./repository.ts";
import { toAnnouncement, type AnnouncementRow } from "./rows.ts";

export class SqliteAnnouncementRepository implements AnnouncementRepository {
  private readonly file: string;
  private readonly insert: Statement;
  private readonly byId: Statement;
  private readonly ofLab: Statement;
  private readonly ofLabIn: Statement;
  private readonly shown: Statement;
  private readonly insertDismissal: Statement;

  constructor(private readonly db: Database) {
    this.file = db.name;
    // Stored times are UTC toISOString() text, so they compare as text in time order. Sections come
    // as one JSON array, so one statement serves any number of them.
    [this.insert, this.byId, this.ofLab, this.ofLabIn, this.shown, this.insertDismissal] = withDatabaseErrors(
      this.file,
      () => [
        db.prepare(
          `INSERT INTO announcements (id, lab_id, section, class_id, author, text, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ),
        db.prepare("SELECT * FROM announcements WHERE id = ?"),
        db.prepare("SELECT * FROM announcements WHERE lab_id = ? ORDER BY created_at DESC, id DESC LIMIT ?"),
        db.prepare(
          `SELECT * FROM announcements
           WHERE lab_id = ? AND (section IS NULL OR section IN (SELECT value FROM json_each(?)))
           ORDER BY created_at DESC, id DESC LIMIT ?`,
        ),
        db.prepare(
          `SELECT * FROM announcements AS a
           WHERE a.lab_id = ? AND a.created_at >= ? AND (a.section IS NULL OR a.section = ?)
             AND NOT EXISTS (
               SELECT 1 FROM announcement_dismissals AS d WHERE d.announcement_id = a.id AND d.username = ?
             )
           ORDER BY a.created_at DESC, a.id DESC LIMIT ?`,
        ),
        db.prepare(
          `INSERT INTO announcement_dismissals (announcement_id, username, dismissed_at) VALUES (?, ?, ?)
           ON CONFLICT (announcement_id, username) DO NOTHING`,
        ),
      ],
    );
  }

  static open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteAnnouncementRepository {
    return new SqliteAnnouncementRepository(openAnnouncementsDatabase(dataDir, options));
  }

  async add(record: AnnouncementRecord): Promise<void> {
    withDatabaseErrors(this.file, () =>
      this.insert.run(
        record.id,
        record.labId,
        record.section,
        record.classId,
        record.author,
        record.text,
        sqliteTimeOf(record.createdAt),
      ),
    );
  }

  async get(id: string): Promise<AnnouncementRecord | undefined> {
    const row = withDatabaseErrors(this.file, () => this.byId.get(id) as AnnouncementRow | undefined);
    return row && toAnnouncement(row);
  }

  async listForLab(
    labId: string,
    options: { sections?: readonly string[]; limit: number },
  ): Promise<AnnouncementRecord[]> {
    const rows = withDatabaseErrors(this.file, () =>
      options.sections === undefined
        ? this.ofLab.all(labId, options.limit)
        : this.ofLabIn.all(labId, JSON.stringify(options.sections), options.limit),
    ) as AnnouncementRow[];
    return rows.map(toAnnouncement);
  }

  async shownTo(view: StudentView): Promise<AnnouncementRecord[]> {
    const rows = withDatabaseErrors(this.file, () =>
      this.shown.all(view.labId, sqliteTimeOf(view.since), view.section, view.username, view.limit),
    ) as AnnouncementRow[];
    return rows.map(toAnnouncement);
  }

  async dismiss(id: string, username: string, at: number): Promise<void> {
    withDatabaseErrors(this.file, () => this.insertDismissal.run(id, username, sqliteTimeOf(at)));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
