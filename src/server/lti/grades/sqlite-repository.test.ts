// The LTI grades store's contract on a real SQLite file (lti-grades.db).
import { repositoryInFreshFolder } from "../../db/testing/repository-harness.ts";
import { SqliteLtiGradesRepository } from "./sqlite-repository.ts";
import { describeLtiGradesRepositoryContract } from "./testing/repository-contract.ts";

describeLtiGradesRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteLtiGradesRepository.open(dataDir)),
);
