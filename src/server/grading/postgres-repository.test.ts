// The repository contract on a real PostgreSQL, and what PostgreSQL adds: migrations shared by
// replicas, and plain words when the server is locked, gone, or from a newer console.
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../db/errors.ts";
import {
  createTestSchema,
  failCommitsWriting,
  runSql,
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
  type TestSchema,
} from "../db/postgres/testing/test-postgres.ts";
import { PostgresGradingRepository } from "./postgres-repository.ts";
import { postgresGradingSchema } from "./postgres-schema.ts";
import { describeGradingRepositoryContract } from "./testing/repository-contract.ts";
import { gradableResult } from "./testing/result-builders.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeGradingRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresGradingRepository.open(url)),
);

describe("the PostgreSQL grading tables", () => {
  let schema: TestSchema;
  const toClose: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    schema = await createTestSchema(server);
  });
  afterEach(async () => {
    for (const each of toClose.splice(0)) await each.close();
    await runSql(schema.url, "DROP TABLE IF EXISTS run_items, grading_runs, self_checks, lab_console_schema");
  });
  afterAll(() => schema?.drop());

  async function openRepository(options: Parameters<typeof PostgresGradingRepository.open>[1] = {}) {
    const repository = await PostgresGradingRepository.open(schema.url, options);
    toClose.push(repository);
    return repository;
  }

  const run = (id: string, sessions: number) => ({
    id,
    labId: "linux-basics",
    startedBy: "ivan",
    createdAt: "2030-01-01T10:00:00.000Z",
    selectedSessionIds: null,
    rerunOf: null,
    items: Array.from({ length: sessions }, (_, index) => ({
      sessionId: `s-${index}`,
      owner: `student-${index}`,
    })),
  });

  it("migrates once, even when several replicas start at the same time", async () => {
    await Promise.all([openRepository(), openRepository(), openRepository()]);
    const client = await openRepository();
    await client.createRun(run("run-1", 2));
    const versions = await runSql(schema.url, "SELECT component, version FROM lab_console_schema");
    expect(versions).toEqual([{ component: "grading", version: postgresGradingSchema.migrations.length }]);
  });

  it("stores thousands of items in one statement, in order", async () => {
    const repository = await openRepository();
    const created = await repository.createRun(run("run-big", 3000));
    expect(created.counts).toEqual({ total: 3000, done: 0, ungradable: 0 });
    const items = await repository.listRunItems("run-big");
    expect(items.map((item) => item.sessionId).slice(0, 3)).toEqual(["s-0", "s-1", "s-2"]);
    expect(items.at(-1)?.sessionId).toBe("s-2999");
  });

  it("answers database_unavailable while another program holds a lock, and writes nothing", async () => {
    const repository = await openRepository({ lockTimeoutMs: 50 });
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("LOCK TABLE grading_runs IN ACCESS EXCLUSIVE MODE");
      const attempt = repository.createRun(run("run-locked", 3));
      await expect(attempt).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await expect(attempt).rejects.toMatchObject({
        code: "database_unavailable",
        message: expect.stringMatching(/is locked by another program\. Try again in a moment\.$/),
      });
      await other.query("ROLLBACK");
    } finally {
      await other.end();
    }
    expect(await repository.listRuns({})).toEqual([]);
    // Once the lock is gone the same call succeeds.
    expect((await repository.createRun(run("run-locked", 3))).counts.total).toBe(3);
  });

  it("answers database_unavailable when its connection is cut mid-statement, and works again after", async () => {
    const repository = await openRepository();
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("LOCK TABLE grading_runs IN ACCESS EXCLUSIVE MODE");
      const attempt = repository.createRun(run("run-cut", 1));
      attempt.catch(() => undefined);
      // An operator ends the console's connection while it waits for the lock.
      const deadline = Date.now() + 10_000;
      for (let ended = 0; ended === 0;) {
        if (Date.now() > deadline) throw new Error("the console never waited for the lock");
        const [row] = await runSql<{ ended: number }>(
          server.url,
          `SELECT count(pg_terminate_backend(pid))::int AS ended FROM pg_stat_activity
           WHERE application_name = 'lab-console' AND wait_event_type = 'Lock'`,
        );
        ended = row?.ended ?? 0;
      }
      await expect(attempt).rejects.toMatchObject({
        code: "database_unavailable",
        message: expect.stringMatching(/^PostgreSQL at 127\.0\.0\.1:\d+\/\w+ closed the connection/),
      });
      await other.query("ROLLBACK");
    } finally {
      await other.end();
    }
    expect((await repository.createRun(run("run-cut", 1))).id).toBe("run-cut");
  });

  it("answers database_unavailable for every write PostgreSQL cannot commit, and stores none of them", async () => {
    const repository = await openRepository();
    await repository.createRun(run("run-1", 1));
    for (const table of ["self_checks", "grading_runs", "run_items"])
      await failCommitsWriting(schema.url, table);
    const full = {
      code: "database_unavailable",
      message: expect.stringMatching(/^The disk holding PostgreSQL's data at .* is full\. Free some space/),
    };
    const result = gradableResult({ sessionId: "s-0", owner: "student-0" });
    const selfCheck = {
      sessionId: "s-0",
      labId: "linux-basics",
      owner: "student-0",
      checkedAt: result.gradedAt,
      result,
    };
    await expect(repository.recordSelfCheck(selfCheck)).rejects.toMatchObject(full);
    await expect(repository.createRun(run("run-2", 2))).rejects.toMatchObject(full);
    await expect(repository.recordResult("run-1", "s-0", result)).rejects.toMatchObject(full);
    await expect(
      repository.finishRun({
        runId: "run-1",
        status: "completed",
        finishedAt: "2030-01-01T10:05:00.000Z",
        closingResults: [{ sessionId: "s-0", result }],
      }),
    ).rejects.toMatchObject(full);
    expect(await repository.listSelfChecks("s-0", 10)).toEqual([]);
    expect((await repository.listRuns({})).map((each) => [each.id, each.status])).toEqual([
      ["run-1", "running"],
    ]);
    expect((await repository.listRunItems("run-1")).map((item) => item.status)).toEqual(["pending"]);
  });

  it("says in plain words when nothing listens at DATABASE_URL, without the password", async () => {
    const url = new URL(server.url);
    url.port = "1";
    url.password = "s3cret";
    const error = await PostgresGradingRepository.open(url.toString(), { connectTimeoutMs: 2000 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toBe(
      `PostgreSQL at 127.0.0.1:1${url.pathname} refuses connections. Check that it is running and that ` +
        "DATABASE_URL names the right host and port.",
    );
  });

  it("refuses tables from a newer console instead of guessing their schema", async () => {
    await openRepository();
    await runSql(
      schema.url,
      "UPDATE lab_console_schema SET version = version + 1 WHERE component = 'grading'",
    );
    await expect(openRepository()).rejects.toThrow(
      /grading tables in .* were written by a newer Lab Console/,
    );
  });

  it("refuses a stored result that does not have the result shape", async () => {
    const repository = await openRepository();
    await repository.createRun(run("run-1", 1));
    await repository.recordResult("run-1", "s-0", gradableResult({ sessionId: "s-0", owner: "student-0" }));
    await runSql(schema.url, `UPDATE run_items SET result = '{"score": "lots"}'`);
    await expect(repository.listRunItems("run-1")).rejects.toThrow();
  });
});
