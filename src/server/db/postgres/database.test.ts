// The pool's own limits on a real PostgreSQL: a network that stops answering fails a query with
// DatabaseUnavailableError within the client's query timeout, and the pool still closes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../errors.ts";
import { PostgresDatabase } from "./database.ts";
import { startStallingProxy } from "./testing/stalling-proxy.ts";
import { createTestSchema, startTestPostgres, type TestPostgres } from "./testing/test-postgres.ts";

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
      expect(Date.now() - started).toBeLessThan(5_000);
      const closing = Date.now();
      await database.close();
      expect(Date.now() - closing).toBeLessThan(5_000);
    } finally {
      await database.close();
      await proxy.close();
      await schema.drop();
    }
  });
});
