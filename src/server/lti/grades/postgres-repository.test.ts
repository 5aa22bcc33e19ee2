// The LTI grades store's contract on a real PostgreSQL.
import { afterAll, beforeAll } from "vitest";
import {
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../../db/postgres/testing/test-postgres.ts";
import { PostgresLtiGradesRepository } from "./postgres-repository.ts";
import { describeLtiGradesRepositoryContract } from "./testing/repository-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeLtiGradesRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresLtiGradesRepository.open(url)),
);
