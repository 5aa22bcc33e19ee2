// Where scheduled classes are kept: every replica's warm pool reads them, and they outlive restarts.
// Async throughout so that SQLite and PostgreSQL fit the same interface.

export interface ClassRecord {
  id: string;
  labId: string;
  /** Milliseconds since the epoch. */
  startsAt: number;
  endsAt: number;
  expected: number;
  createdBy: string;
  createdAt: number;
}

export interface ClassRepository {
  add(record: ClassRecord): Promise<void>;
  /** Classes that end after `time`, soonest start first. */
  endingAfter(time: number): Promise<ClassRecord[]>;
  get(id: string): Promise<ClassRecord | undefined>;
  /** False when there was no such class. */
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}
