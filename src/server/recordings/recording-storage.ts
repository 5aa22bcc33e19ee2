// Where console recordings are kept, as the recording store (recording-store.ts) uses it: files in
// DATA_DIR/recordings for a single replica, PostgreSQL when replicas share DATABASE_URL. The storage
// keeps each recording as two parts, the head (appended to, in order) and the tail (replaced whole);
// what goes into them (batching, the size cap, the header, the gap marker) is the store's.
import type { Readable } from "node:stream";
import type { RecordingHeader } from "./asciicast.ts";

export interface StoredRecording {
  header: RecordingHeader;
  /** The whole .cast's length in bytes as served: the head, its header line included, and the tail. */
  bytes: number;
  /** The tail's share of `bytes`; 0 while the recording has none (its head still has room). */
  tailBytes: number;
  /** The last append or tail replacement. */
  lastWrittenAt: Date;
}

export interface RecordingBatch {
  /** Written as the first line when the recording is new, and kept for finding and listing it. */
  header: RecordingHeader;
  /** Whole asciicast event lines. */
  text: string;
}

export interface RecordingStorage {
  find(sessionId: string): Promise<StoredRecording | undefined>;
  /** Appends to the head, after everything appended before, whichever replica appended it. */
  append(sessionId: string, batch: RecordingBatch): Promise<void>;
  /**
   * Puts `batch.text` in place of the tail, all at once: a reader gets the old tail or the new one,
   * never part of either. A recording that has no head yet gets one holding the header alone.
   */
  replaceTail(sessionId: string, batch: RecordingBatch): Promise<void>;
  /** The tail's event lines; undefined when the recording has no tail (or is gone). */
  tail(sessionId: string): Promise<string | undefined>;
  /**
   * The recording as `find` measured it, exactly `bytes` long (the length `find` gave), so the answer
   * matches the content-length sent before it: the head's first `bytes` bytes while it had no tail
   * (what was appended later is left out), or the whole head and the tail. Undefined when it is not
   * that recording any more: gone (the retention sweep may remove it between `find` and `read`) or
   * its tail replaced since by one of another length; `find` again. Rejects before any byte when it
   * cannot be read at all.
   */
  read(sessionId: string, bytes: number): Promise<Readable | undefined>;
  /** Newest first (by the header's start time). */
  list(filter: { labId?: string; owner?: string }): Promise<StoredRecording[]>;
  /** Removes the recordings (head and tail) last written before `cutoff`; returns how many. */
  removeWrittenBefore(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}
