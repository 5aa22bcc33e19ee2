// The audit repository contract on a real PostgreSQL, and its own table beside the grading tables.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresAuditSchema } from "../db/postgres/audit-schema.ts";
import {
  createTestSchema,
  runSql,
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { PostgresGradingRepository } from "../grading/postgres-repository.ts";
import { PostgresAuditRepository } from "./postgres-repository.ts";
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
});
