// Where console recordings are kept, as the recording store (recording-store.ts) uses it: files in
// DATA_DIR/recordings for a single replica, PostgreSQL when replicas share DATABASE_URL. The storage
// only keeps bytes in order; what goes into them (batching, the size cap, the header) is the store's.
import type { Readable } from "node:stream";
import type { RecordingHeader } from "./asciicast.ts";

export interface StoredRecording {
  header: RecordingHeader;
  /** The whole .cast's length in bytes, its header line included. */
  bytes: number;
  lastWrittenAt: Date;
  /** It ends with the size-cap marker: nothing more is appended to it. */
  capped: boolean;
}

export interface RecordingBatch {
  /** Written as the first line when the recording is new, and kept for finding and listing it. */
  header: RecordingHeader;
  /** Whole asciicast event lines. */
  text: string;
  /** The batch ends with the size-cap marker. */
  capped: boolean;
}

export interface RecordingStorage {
  find(sessionId: string): Promise<StoredRecording | undefined>;
  /** Appends after everything appended before, whichever replica appended it. */
  append(sessionId: string, batch: RecordingBatch): Promise<void>;
  /**
   * The first `bytes` bytes of a recording (a length `find` gave): what was written later is left out,
   * so the answer matches the content-length sent before it. Undefined when the recording is gone
   * (the retention sweep may remove it between `find` and `read`); rejects before any byte when it
   * cannot be read at all.
   */
  read(sessionId: string, bytes: number): Promise<Readable | undefined>;
  /** Newest first (by the header's start time). */
  list(filter: { labId?: string; owner?: string }): Promise<StoredRecording[]>;
  /** Removes the recordings last written before `cutoff`; returns how many. */
  removeWrittenBefore(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}
