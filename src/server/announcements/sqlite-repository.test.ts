// The announcements' contract on a real SQLite file (announcements.db).
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { SqliteAnnouncementRepository } from "./sqlite-repository.ts";
import { describeAnnouncementRepositoryContract } from "./testing/repository-contract.ts";

describeAnnouncementRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteAnnouncementRepository.open(dataDir)),
);
