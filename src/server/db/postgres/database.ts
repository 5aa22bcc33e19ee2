// A PostgreSQL connection pool the way every Lab Console store uses it: bounded waits (a hung server,
// a held lock or a network that silently drops packets must not hang a request, the sign-out poll or
// shutdown forever), the schema migrated before anything else touches it, and every database-level
// failure turned into DatabaseUnavailableError.
import pg from "pg";
import { migratePostgres, type PostgresMigration } from "./migrate.ts";
import { translatePostgresError } from "./errors.ts";

/** Runs statements: the pool outside a transaction, one connection inside one. */
export interface Queryable {
  query<Row extends object>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export interface PostgresOptions {
  /** Connections at most; the console's stores are light, so a few each suffice. */
  poolSize?: number;
  /** How long a statement waits for another session's lock before failing with database_unavailable. */
  lockTimeoutMs?: number;
  /** How long any statement may run (the server's limit: it answers with an error). */
  statementTimeoutMs?: number;
  /**
   * How long the console waits for any answer (its own limit, for when no answer can come: the
   * network dropped, the server froze). Default: the statement timeout and 5 s more, so that a
   * server that does answer says why itself.
   */
  queryTimeoutMs?: number;
  /** How long to wait for a connection (TCP, TLS and sign-in) before giving up. */
  connectTimeoutMs?: number;
  /** Where a connection that breaks while idle is reported (the next query reports it anyway). */
  log?: { warn(object: object, message: string): void };
}

export interface PostgresSchema {
  /** Names this store's migrations apart from other stores' in the same database. */
  component: string;
  migrations: readonly PostgresMigration[];
}

export class PostgresDatabase implements Queryable {
  private constructor(
    private readonly pool: pg.Pool,
    /** Where the database is, for messages: host, port and database name, never the password. */
    readonly label: string,
  ) {}

  static async open(
    url: string,
    schema: PostgresSchema,
    options: PostgresOptions = {},
  ): Promise<PostgresDatabase> {
    const label = describeDatabaseUrl(url);
    const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      lock_timeout: options.lockTimeoutMs ?? 5_000,
      statement_timeout: statementTimeoutMs,
      query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 5_000,
      // A transaction left open by a crashed request must not hold its locks for long.
      idle_in_transaction_session_timeout: 60_000,
      application_name: "lab-console",
      // Idle pooled connections whose peer vanished are found by TCP keepalive probes, starting
      // after 10 s of silence instead of the system's 2 hours.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // Without a listener, an idle connection dropped by the server would crash the process.
    pool.on("error", (error) =>
      options.log?.warn({ err: error }, `idle PostgreSQL connection to ${label} failed`),
    );
    const database = new PostgresDatabase(pool, label);
    try {
      await database.transaction((client) => migratePostgres(client, schema, label));
    } catch (error) {
      await pool.end();
      throw error;
    }
    return database;
  }

  async query<Row extends object>(sql: string, params: unknown[] = []): Promise<Row[]> {
    try {
      return (await this.pool.query<Row>(sql, params)).rows;
    } catch (error) {
      throw translatePostgresError(error, this.label);
    }
  }

  /** Runs `work` in one transaction on one connection: all of it is committed, or none. */
  async transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T> {
    let connection: pg.PoolClient;
    try {
      connection = await this.pool.connect();
    } catch (error) {
      throw translatePostgresError(error, this.label);
    }
    const client: Queryable = {
      query: async <Row extends object>(sql: string, params: unknown[] = []) =>
        (await connection.query<Row>(sql, params)).rows,
    };
    let broken: unknown;
    // A checked-out connection that breaks emits "error": unheard, it would crash the process. The
    // statement in flight fails on its own and says why.
    const onError = (error: Error) => (broken = error);
    connection.on("error", onError);
    try {
      await connection.query("BEGIN");
      const result = await work(client);
      const commit = await connection.query("COMMIT");
      // After a failed statement the transaction is aborted, and PostgreSQL answers COMMIT with
      // ROLLBACK, not an error: `work` caught that failure, and nothing of it was stored.
      if (commit.command !== "COMMIT") {
        throw new Error(
          `The transaction on PostgreSQL at ${this.label} was rolled back instead of committed: ` +
            "a statement in it failed, and its error was caught.",
        );
      }
      return result;
    } catch (error) {
      await connection.query("ROLLBACK").catch((rollbackError: unknown) => {
        // The connection itself is gone: it must not go back into the pool.
        broken = rollbackError;
      });
      throw translatePostgresError(error, this.label);
    } finally {
      connection.off("error", onError);
      connection.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}

/** `host:port/database` from a connection URL: enough to find the server, nothing secret. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get("host") || "localhost";
    return `${host}:${parsed.port || "5432"}${parsed.pathname || "/"}`;
  } catch {
    return "the server in DATABASE_URL";
  }
}
