// The ended sign-ins contract on a real SQLite file (ended-sign-ins.db).
import { repositoryInFreshFolder } from "../../db/testing/repository-harness.ts";
import { SqliteEndedSignInRepository } from "./sqlite-repository.ts";
import { describeEndedSignInRepositoryContract } from "./testing/repository-contract.ts";

describeEndedSignInRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteEndedSignInRepository.open(dataDir)),
);
