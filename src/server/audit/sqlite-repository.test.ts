// The audit repository contract on a real SQLite file (audit.db).
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { SqliteAuditRepository } from "./sqlite-repository.ts";
import { describeAuditRepositoryContract } from "./testing/repository-contract.ts";

describeAuditRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteAuditRepository.open(dataDir)),
);
