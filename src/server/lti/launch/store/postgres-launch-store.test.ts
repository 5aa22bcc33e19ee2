// The LTI launch store's contract on a real PostgreSQL.
import { afterAll, beforeAll } from "vitest";
import {
  repositoryInFreshSchema,
  startTestPostgres,
  type TestPostgres,
} from "../../../db/postgres/testing/test-postgres.ts";
import { PostgresLtiLaunchStore } from "./postgres-launch-store.ts";
import { describeLtiLaunchStoreContract } from "./testing/launch-store-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeLtiLaunchStoreContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresLtiLaunchStore.open(url)),
);
