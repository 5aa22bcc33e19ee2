// The class schedule's contract on a real SQLite file (classes.db).
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { SqliteClassRepository } from "./sqlite-repository.ts";
import { describeClassRepositoryContract } from "./testing/repository-contract.ts";

describeClassRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteClassRepository.open(dataDir)),
);
