// What can go wrong with PostgreSQL, in words an operator can act on: the same DatabaseUnavailableError
// the SQLite files give. Constraint violations and SQL mistakes are not translated: they are bugs, not
// outages.
import { DatabaseError } from "pg";
import { DatabaseUnavailableError } from "../errors.ts";

type Describe = (database: string) => string;

const tryAgain = "Try again in a moment.";

// SQLSTATE codes (https://www.postgresql.org/docs/current/errcodes-appendix.html), most specific first.
const problemsBySqlState: [prefix: string, describe: Describe][] = [
  ["28", (db) => `PostgreSQL at ${db} refused the user name or password in DATABASE_URL.`],
  [
    "3D000",
    (db) => `The database named in DATABASE_URL does not exist at ${db}. Create it first (createdb).`,
  ],
  [
    "42501",
    (db) =>
      `The PostgreSQL user in DATABASE_URL lacks a permission the console needs at ${db} ` +
      "(it creates and changes its own tables). Grant it, or use the database's owner.",
  ],
  ["53100", (db) => `The disk holding PostgreSQL's data at ${db} is full. Free some space and try again.`],
  [
    "53300",
    (db) => `PostgreSQL at ${db} has no room for another connection (too many connections). ${tryAgain}`,
  ],
  ["53", (db) => `PostgreSQL at ${db} ran out of resources (memory or disk). Check the server.`],
  ["55P03", (db) => `The database ${db} is locked by another program. ${tryAgain}`],
  ["57014", (db) => `PostgreSQL at ${db} took too long to answer. ${tryAgain}`],
  // 57P01 is also what an administrator's pg_terminate_backend looks like.
  [
    "57P01",
    (db) =>
      `PostgreSQL at ${db} closed the connection (shut down, or ended by an administrator). ${tryAgain}`,
  ],
  ["57P", (db) => `PostgreSQL at ${db} is shutting down or starting up. ${tryAgain}`],
  ["08", (db) => `The connection to PostgreSQL at ${db} was lost. ${tryAgain}`],
  ["40", (db) => `PostgreSQL at ${db} is busy with conflicting changes. ${tryAgain}`],
  [
    "25006",
    (db) => `PostgreSQL at ${db} only allows reading (a standby?). Point DATABASE_URL at the primary server.`,
  ],
];

// Errors from the socket below the driver, by Node's error code.
const problemsBySocketCode: Record<string, Describe> = {
  ECONNREFUSED: (db) =>
    `PostgreSQL at ${db} refuses connections. Check that it is running and that DATABASE_URL names the right host and port.`,
  ENOTFOUND: (db) => `The host of DATABASE_URL (${db}) cannot be found. Check the host name.`,
  EAI_AGAIN: (db) => `The host of DATABASE_URL (${db}) cannot be looked up right now. ${tryAgain}`,
  ETIMEDOUT: (db) =>
    `PostgreSQL at ${db} does not answer. Check the network between the console and the database.`,
  EHOSTUNREACH: (db) =>
    `PostgreSQL at ${db} cannot be reached. Check the network between the console and the database.`,
  ECONNRESET: (db) => `The connection to PostgreSQL at ${db} was lost. ${tryAgain}`,
  EPIPE: (db) => `The connection to PostgreSQL at ${db} was lost. ${tryAgain}`,
};

// The driver reports a few failures only by message (anchored: no message of ours may match).
const problemsByDriverMessage: [pattern: RegExp, describe: Describe][] = [
  [
    /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/,
    (db) => `PostgreSQL at ${db} does not answer. Check the network between the console and the database.`,
  ],
  // The client's own query_timeout: sent, and no answer came at all (database.ts).
  [
    /^Query read timeout$/,
    (db) =>
      `PostgreSQL at ${db} stopped answering in the middle of a request (a dropped network, or a frozen ` +
      "server). Check the network between the console and the database.",
  ],
  [
    /^(Connection terminated( unexpectedly)?|Client has encountered a connection error and is not queryable)$/,
    (db) => `The connection to PostgreSQL at ${db} was lost. ${tryAgain}`,
  ],
];

/** A database-level failure as DatabaseUnavailableError; anything else unchanged. */
export function translatePostgresError(error: unknown, database: string): unknown {
  if (error instanceof DatabaseUnavailableError || !(error instanceof Error)) return error;
  const describe = describeProblem(error);
  return describe ? new DatabaseUnavailableError(describe(database), error) : error;
}

function describeProblem(error: Error): Describe | undefined {
  if (error instanceof DatabaseError) {
    const state = error.code ?? "";
    return problemsBySqlState.find(([prefix]) => state.startsWith(prefix))?.[1];
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined) return problemsBySocketCode[code];
  // A connect that fails for several addresses at once (localhost: ::1 and 127.0.0.1).
  if (error instanceof AggregateError) {
    const first = error.errors.find((inner): inner is Error => inner instanceof Error);
    return first ? describeProblem(first) : undefined;
  }
  return problemsByDriverMessage.find(([pattern]) => pattern.test(error.message))?.[1];
}
