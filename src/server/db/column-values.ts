// The column kinds that better-sqlite3 and pg hand back differently, so that each table has one row
// mapping for both stores. A difference the value's type shows is read from it; one it cannot show
// (JSON) is named by the store.

/** A time: SQLite stores UTC toISOString() text; pg returns a timestamptz as a Date. */
export type StoredTime = string | Date;

/** A bigint: SQLite returns integers as numbers; pg returns int8 as text, since it may not fit a number. */
export type StoredInteger = number | string;

/** A time given in ms, as SQLite stores it (pg takes the Date itself). */
export const sqliteTimeOf = (ms: number): string => new Date(ms).toISOString();

export const isoOf = (time: StoredTime): string => (typeof time === "string" ? time : time.toISOString());

export const isoOrNullOf = (time: StoredTime | null): string | null => (time === null ? null : isoOf(time));

export const epochMsOf = (time: StoredTime): number =>
  typeof time === "string" ? Date.parse(time) : time.getTime();

/**
 * Turns a JSON column, as the driver returns it, into its value. The store says which: the value
 * cannot, since a JSON string that pg has parsed is text just as SQLite's stored JSON is.
 */
export type JsonColumnReader = (stored: unknown) => unknown;

/** better-sqlite3: SQLite keeps JSON as the text it was given. */
export const jsonFromText: JsonColumnReader = (stored) => JSON.parse(stored as string) as unknown;

/** pg: jsonb arrives parsed, and an array column (text[]) as an array. */
export const jsonAsReturned: JsonColumnReader = (stored) => stored;
