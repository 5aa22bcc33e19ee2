// The announcements' contract on a real PostgreSQL.
import { afterAll, beforeAll } from "vitest";
import {
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { PostgresAnnouncementRepository } from "./postgres-repository.ts";
import { describeAnnouncementRepositoryContract } from "./testing/repository-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeAnnouncementRepositoryContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresAnnouncementRepository.open(url)),
);
