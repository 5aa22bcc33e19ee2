// AnnouncementRepository on PostgreSQL (pg), chosen by DATABASE_URL: what every replica shows.
import { PostgresDatabase, type PostgresOptions } from "../db/postgres/database.ts";
import { postgresAnnouncementsSchema } from "./postgres-schema.ts";
import type { AnnouncementRecord, AnnouncementRepository, StudentView } from "./repository.ts";
import { toAnnouncement, type AnnouncementRow } from "./rows.ts";

export class PostgresAnnouncementRepository implements AnnouncementRepository {
  constructor(private readonly db: PostgresDatabase) {}

  /** Short reads and single-row writes: every student's session page reads it every few seconds. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresAnnouncementRepository> {
    return new PostgresAnnouncementRepository(
      await PostgresDatabase.open(url, postgresAnnouncementsSchema, {
        statementTimeoutMs: 8_000,
        queryTimeoutMs: 10_000,
        ...options,
      }),
    );
  }

  async add(record: AnnouncementRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO announcements (id, lab_id, section, class_id, author, text, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        record.id,
        record.labId,
        record.section,
        record.classId,
        record.author,
        record.text,
        new Date(record.createdAt),
      ],
    );
  }

  async get(id: string): Promise<AnnouncementRecord | undefined> {
    const [row] = await this.db.query<AnnouncementRow>("SELECT * FROM announcements WHERE id = $1", [id]);
    return row && toAnnouncement(row);
  }

  // Ties in time are ordered by id byte by byte (COLLATE "C"), as SQLite orders them.
  async listForLab(
    labId: string,
    options: { sections?: readonly string[]; limit: number },
  ): Promise<AnnouncementRecord[]> {
    const rows =
      options.sections === undefined
        ? await this.db.query<AnnouncementRow>(
            `SELECT * FROM announcements WHERE lab_id = $1 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $2`,
            [labId, options.limit],
          )
        : await this.db.query<AnnouncementRow>(
            `SELECT * FROM announcements
             WHERE lab_id = $1 AND (section IS NULL OR section = ANY($2::text[]))
             ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
            [labId, options.sections, options.limit],
          );
    return rows.map(toAnnouncement);
  }

  async shownTo(view: StudentView): Promise<AnnouncementRecord[]> {
    const rows = await this.db.query<AnnouncementRow>(
      `SELECT * FROM announcements AS a
       WHERE a.lab_id = $1 AND a.created_at >= $2 AND (a.section IS NULL OR a.section = $3)
         AND NOT EXISTS (
           SELECT 1 FROM announcement_dismissals AS d WHERE d.announcement_id = a.id AND d.username = $4
         )
       ORDER BY a.created_at DESC, a.id COLLATE "C" DESC LIMIT $5`,
      [view.labId, new Date(view.since), view.section, view.username, view.limit],
    );
    return rows.map(toAnnouncement);
  }

  async dismiss(id: string, username: string, at: number): Promise<void> {
    await this.db.query(
      `INSERT INTO announcement_dismissals (announcement_id, username, dismissed_at) VALUES ($1, $2, $3)
       ON CONFLICT (announcement_id, username) DO NOTHING`,
      [id, username, new Date(at)],
    );
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
