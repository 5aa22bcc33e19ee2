// The pool's own limits on a real PostgreSQL: a network that stops answering fails a query with
// DatabaseUnavailableError within the client's query timeout, and the pool still closes; and a
// transaction is reported committed only when PostgreSQL committed it.
import { patient } from "../../../common/testing/patience.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../errors.ts";
import { PostgresDatabase } from "./database.ts";
import { startStallingProxy } from "./testing/stalling-proxy.ts";
import {
  createTestSchema,
  failCommitsWriting,
  startTestPostgres,
  type TestPostgres,
} from "./testing/test-postgres.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describe("PostgresDatabase", () => {
  it("gives up on a query the network swallowed, says why, and still closes", async () => {
    const schema = await createTestSchema(server);
    const proxy = await startStallingProxy(schema.url);
    const database = await PostgresDatabase.open(
      proxy.url,
      { component: "query-timeout-test", migrations: [] },
      { poolSize: 1, queryTimeoutMs: 300, connectTimeoutMs: 300 },
    );
    try {
      expect(await database.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      proxy.stall();
      const started = Date.now();
      const error = await database.query("SELECT 1").catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toMatch(/stopped answering in the middle of a request/);
      expect(Date.now() - started).toBeLessThan(patient(5_000));
      const closing = Date.now();
      await database.close();
      expect(Date.now() - closing).toBeLessThan(patient(5_000));
    } finally {
      await database.close();
      await proxy.close();
      await schema.drop();
    }
  });

  const notes = {
    component: "commit-test",
    migrations: [{ name: "notes", sql: "CREATE TABLE notes (text text NOT NULL)" }],
  };

  it("fails a transaction PostgreSQL rolled back at COMMIT, even when its work caught the failed statement", async () => {
    const schema = await createTestSchema(server);
    const database = await PostgresDatabase.open(schema.url, notes);
    try {
      const attempt = database.transaction(async (client) => {
        await client.query("INSERT INTO notes VALUES ('a grade')");
        // A failed statement aborts the transaction; PostgreSQL then answers COMMIT with ROLLBACK.
        await client.query("INSERT INTO notes VALUES (NULL)").catch(() => undefined);
        return "committed";
      });
      await expect(attempt).rejects.toThrow(/rolled back instead of committed/);
      expect(await database.query("SELECT text FROM notes")).toEqual([]);
      // The connection went back to the pool in working order.
      await database.transaction((client) => client.query("INSERT INTO notes VALUES ('next')"));
      expect(await database.query("SELECT text FROM notes")).toEqual([{ text: "next" }]);
    } finally {
      await database.close();
      await schema.drop();
    }
  });

  it("fails a write whose COMMIT fails, in a transaction or on its own, in plain words", async () => {
    const schema = await createTestSchema(server);
    const database = await PostgresDatabase.open(schema.url, notes);
    try {
      await failCommitsWriting(schema.url, "notes");
      const full = {
        code: "database_unavailable",
        message: expect.stringMatching(/^The disk holding PostgreSQL's data at .* is full\. Free some space/),
      };
      await expect(database.query("INSERT INTO notes VALUES ('alone')")).rejects.toMatchObject(full);
      let inserted = false;
      const inTransaction = database.transaction(async (client) => {
        await client.query("INSERT INTO notes VALUES ('together')");
        inserted = true;
        return "committed";
      });
      await expect(inTransaction).rejects.toMatchObject(full);
      // The statement itself succeeded: the failure came with COMMIT.
      expect(inserted).toBe(true);
      expect(await database.query("SELECT text FROM notes")).toEqual([]);
    } finally {
      await database.close();
      await schema.drop();
    }
  });
});
