// The LTI launch store's contract on a real SQLite file (lti-launches.db).
import { repositoryInFreshFolder } from "../../../db/testing/repository-harness.ts";
import { SqliteLtiLaunchStore } from "./sqlite-launch-store.ts";
import { describeLtiLaunchStoreContract } from "./testing/launch-store-contract.ts";

describeLtiLaunchStoreContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteLtiLaunchStore.open(dataDir)),
);
