// Recordings in PostgreSQL (DATABASE_URL): the storage every replica shares. A batch is one statement
// that bumps the recording's byte count and chunk number and stores the chunk under that number, so
// whichever replica appends next continues the same recording, in order. The tail is a column of the
// recording's row, replaced whole: a reader's one statement sees the old tail or the new one.
import { Readable } from "node:stream";
import { PostgresDatabase, type PostgresOptions } from "../db/postgres/database.ts";
import { headerLine, parseHeader } from "./asciicast.ts";
import { postgresRecordingsSchema } from "./postgres-schema.ts";
import type { RecordingBatch, RecordingStorage, StoredRecording } from "./recording-storage.ts";

interface RecordingRow {
  header: string;
  /** The head's bytes: the header line and the chunks. */
  bytes: string;
  tail_bytes: string;
  last_written_at: Date;
}

/** Chunks fetched per query while a recording is read: a few MiB at most in a flood's big batches. */
const chunksPerPage = 64;

const recordingColumns = "header, bytes, tail_bytes, last_written_at";

export class PostgresRecordingStorage implements RecordingStorage {
  constructor(private readonly db: PostgresDatabase) {}

  /** Connects, and creates or upgrades the tables. */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresRecordingStorage> {
    return new PostgresRecordingStorage(await PostgresDatabase.open(url, postgresRecordingsSchema, options));
  }

  async find(sessionId: string): Promise<StoredRecording | undefined> {
    const [row] = await this.db.query<RecordingRow>(
      `SELECT ${recordingColumns} FROM console_recordings WHERE session_id = $1`,
      [sessionId],
    );
    return row && toStoredRecording(row);
  }

  async append(sessionId: string, batch: RecordingBatch): Promise<void> {
    const header = headerLine(batch.header);
    const { owner, labId } = batch.header.lab_console;
    await this.db.query(
      `WITH recording AS (
         INSERT INTO console_recordings
           (session_id, owner, lab_id, header, started_at, last_written_at, bytes, chunks)
         VALUES ($1, $2, $3, $4, to_timestamp($5::float8), now(), $6::bigint + $7::bigint, 1)
         ON CONFLICT (session_id) DO UPDATE SET
           bytes = console_recordings.bytes + $7::bigint,
           chunks = console_recordings.chunks + 1,
           last_written_at = now()
         RETURNING session_id, chunks
       )
       INSERT INTO console_recording_chunks (session_id, seq, text)
       SELECT session_id, chunks, $8 FROM recording`,
      [
        sessionId,
        owner,
        labId,
        header,
        batch.header.timestamp,
        Buffer.byteLength(header),
        Buffer.byteLength(batch.text),
        batch.text,
      ],
    );
  }

  async replaceTail(sessionId: string, batch: RecordingBatch): Promise<void> {
    const header = headerLine(batch.header);
    const { owner, labId } = batch.header.lab_console;
    // A recording not there yet (its head's first batch lost) is made with the header alone as head.
    await this.db.query(
      `INSERT INTO console_recordings
         (session_id, owner, lab_id, header, started_at, last_written_at, bytes, chunks, tail, tail_bytes)
       VALUES ($1, $2, $3, $4, to_timestamp($5::float8), now(), $6::bigint, 0, $7, $8::bigint)
       ON CONFLICT (session_id) DO UPDATE SET
         tail = excluded.tail,
         tail_bytes = excluded.tail_bytes,
         last_written_at = now()`,
      [
        sessionId,
        owner,
        labId,
        header,
        batch.header.timestamp,
        Buffer.byteLength(header),
        batch.text,
        Buffer.byteLength(batch.text),
      ],
    );
  }

  async tail(sessionId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ tail: string | null }>(
      "SELECT tail FROM console_recordings WHERE session_id = $1",
      [sessionId],
    );
    return row?.tail ?? undefined;
  }

  async read(sessionId: string, bytes: number): Promise<Readable | undefined> {
    const [row] = await this.db.query<{ header: string; bytes: string; tail: string | null }>(
      "SELECT header, bytes, tail FROM console_recordings WHERE session_id = $1",
      [sessionId],
    );
    // Removed by the retention sweep since it was found.
    if (!row) return undefined;
    const headBytes = Number(row.bytes);
    const tail = row.tail === null ? undefined : Buffer.from(row.tail);
    // What find measured before a tail was stored: the head's first bytes. Otherwise the whole head
    // and the tail, if it is as long as when it was found.
    const fromHead = bytes <= headBytes ? bytes : headBytes;
    if (bytes > headBytes && (!tail || headBytes + tail.length !== bytes)) return undefined;
    const first = await this.chunksAfter(sessionId, 0);
    return Readable.from(
      this.bytesOf(sessionId, row.header, first, fromHead, bytes > headBytes ? tail : undefined),
    );
  }

  async list(filter: { labId?: string; owner?: string }): Promise<StoredRecording[]> {
    const rows = await this.db.query<RecordingRow>(
      `SELECT ${recordingColumns} FROM console_recordings
       WHERE ($1::text IS NULL OR lab_id = $1) AND ($2::text IS NULL OR owner = $2)
       ORDER BY started_at DESC`,
      [filter.labId ?? null, filter.owner ?? null],
    );
    return rows.map(toStoredRecording);
  }

  async removeWrittenBefore(cutoff: Date): Promise<number> {
    const removed = await this.db.query<{ session_id: string }>(
      "DELETE FROM console_recordings WHERE last_written_at < $1 RETURNING session_id",
      [cutoff],
    );
    return removed.length;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** The header, then the chunks page by page, cut off after `bytes`; then the tail, if any. */
  private async *bytesOf(
    sessionId: string,
    header: string,
    firstPage: { seq: number; text: string }[],
    bytes: number,
    tail: Buffer | undefined,
  ): AsyncGenerator<Buffer> {
    let left = bytes;
    const take = (text: string): Buffer => {
      const buffer = Buffer.from(text);
      const part = buffer.length <= left ? buffer : buffer.subarray(0, left);
      left -= part.length;
      return part;
    };
    yield take(header);
    let page = firstPage;
    while (left > 0 && page.length > 0) {
      for (const chunk of page) {
        if (left === 0) break;
        yield take(chunk.text);
      }
      page = left > 0 ? await this.chunksAfter(sessionId, page.at(-1)!.seq) : [];
    }
    if (tail) yield tail;
  }

  private async chunksAfter(sessionId: string, seq: number): Promise<{ seq: number; text: string }[]> {
    return this.db.query<{ seq: number; text: string }>(
      `SELECT seq, text FROM console_recording_chunks WHERE session_id = $1 AND seq > $2
       ORDER BY seq LIMIT ${chunksPerPage}`,
      [sessionId, seq],
    );
  }
}

function toStoredRecording(row: RecordingRow): StoredRecording {
  const header = parseHeader(row.header.trimEnd());
  if (!header)
    throw new Error(`A console recording's header in the database is not asciicast: ${row.header}`);
  const tailBytes = Number(row.tail_bytes);
  return { header, bytes: Number(row.bytes) + tailBytes, tailBytes, lastWrittenAt: row.last_written_at };
}
