// The ended sign-ins contract on a real SQLite file (ended-sign-ins.db), and its writes on a disk
// that fails them.
import { describe, expect, it } from "vitest";
import { runOnFaultyDisk, type DiskFault } from "../../db/testing/disk-faults.ts";
import { repositoryInFreshFolder } from "../../db/testing/repository-harness.ts";
import { SqliteEndedSignInRepository } from "./sqlite-repository.ts";
import { describeEndedSignInRepositoryContract } from "./testing/repository-contract.ts";

describeEndedSignInRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteEndedSignInRepository.open(dataDir)),
);

describe("the SQLite sign-out database on a failing disk", () => {
  // On a fresh ended-sign-ins.db, whose write-ahead log must grow for every commit. SignIns
  // holds a sign-out it could not store and retries it, so the failure has to reach it.
  it.each<[DiskFault, string]>([
    ["full", "SQLITE_FULL"],
    ["write-error", "SQLITE_IOERR_WRITE"],
  ])(
    "answers database_unavailable for every write on a %s disk, and stores none of them",
    async (fault, causeCode) => {
      const report = await runOnFaultyDisk("ended-sign-ins", fault);
      const failed = { threw: expect.objectContaining({ code: "database_unavailable", causeCode }) };
      expect(report).toEqual({
        record: failed,
        recordCutOff: failed,
        purgeExpired: failed,
        stored: { ids: ["signed-out-before", "expired-before"], cutOffs: [] },
      });
    },
  );
});
