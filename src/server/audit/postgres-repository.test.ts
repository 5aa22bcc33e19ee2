// The audit repository contract on a real PostgreSQL, its own table beside the grading tables, and
// an entry PostgreSQL cannot commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestSchema,
  failCommitsWriting,
  runSql,
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { PostgresGradingRepository } from "../grading/postgres-repository.ts";
import { AuditLog } from "./audit-log.ts";
import { PostgresAuditRepository } from "./postgres-repository.ts";
import { postgresAuditSchema } from "./postgres-schema.ts";
import { anAuditEntry, describeAuditRepositoryContract } from "./testing/repository-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeAuditRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresAuditRepository.open(url)),
);

describe("the PostgreSQL audit table", () => {
  it("shares one database with the grading tables, each store with its own schema version", async () => {
    const schema = await createTestSchema(server);
    const grading = await PostgresGradingRepository.open(schema.url);
    const audit = await PostgresAuditRepository.open(schema.url);
    try {
      await audit.append(anAuditEntry());
      expect(
        await runSql(schema.url, "SELECT component, version FROM lab_console_schema ORDER BY component"),
      ).toEqual([
        { component: "audit", version: postgresAuditSchema.migrations.length },
        { component: "grading", version: expect.any(Number) },
      ]);
      expect(await grading.listRuns({})).toEqual([]);
    } finally {
      await grading.close();
      await audit.close();
      await schema.drop();
    }
  });

  it("logs and counts an entry PostgreSQL could not commit, and never hands out an id for it", async () => {
    const schema = await createTestSchema(server);
    const repository = await PostgresAuditRepository.open(schema.url);
    try {
      await repository.append(anAuditEntry({ action: "launch" }));
      await failCommitsWriting(schema.url, "audit_log");
      const logged: string[] = [];
      let failures = 0;
      const log = new AuditLog({
        repository,
        now: () => new Date(),
        log: {
          error: (object, message) => logged.push(`${message}: ${(object as { err: Error }).err.message}`),
        },
        onWriteFailed: () => (failures += 1),
      });
      await expect(log.record({ action: "end", actor: "system" })).resolves.toBeUndefined();
      expect(logged).toEqual([
        expect.stringMatching(
          /^audit entry could not be stored: The disk holding PostgreSQL's data at .* is full\./,
        ),
      ]);
      expect(failures).toBe(1);
      await expect(repository.append(anAuditEntry({ action: "extend" }))).rejects.toMatchObject({
        code: "database_unavailable",
      });
      expect((await repository.list({}, { limit: 10 })).map((entry) => entry.action)).toEqual(["launch"]);
    } finally {
      await repository.close();
      await schema.drop();
    }
  });
});
