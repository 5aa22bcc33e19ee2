// The audit repository contract on a real SQLite file (audit.db).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteAuditRepository } from "./sqlite-repository.ts";
import { describeAuditRepositoryContract } from "./testing/repository-contract.ts";

describeAuditRepositoryContract("SQLite", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "audit-db-"));
  const open: SqliteAuditRepository[] = [];
  const openOne = () => {
    const repository = SqliteAuditRepository.open(dir);
    open.push(repository);
    return repository;
  };
  const repository = openOne();
  return {
    repository,
    async reopen() {
      await repository.close();
      return openOne();
    },
    async cleanup() {
      await Promise.all(open.map((each) => each.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
});
