// The class schedule's contract on a real PostgreSQL.
import { afterAll, beforeAll } from "vitest";
import {
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { PostgresClassRepository } from "./postgres-repository.ts";
import { describeClassRepositoryContract } from "./testing/repository-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeClassRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresClassRepository.open(url)),
);
