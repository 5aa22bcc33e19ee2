// The harness a repository contract suite wants: the repository, a way to reopen it as a restarted
// console would, and a clean-up that closes every copy and removes the store. SQLite's store is a
// fresh folder; Postgres's is a fresh schema (db/postgres/testing/test-postgres.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export interface RepositoryHarness<Repository> {
  repository: Repository;
  reopen(): Promise<Repository>;
  cleanup(): Promise<void>;
}

/** Opens the repository once now and again on each reopen; clean-up closes all, then removes the store. */
export async function reopenableRepository<Repository extends { close(): Promise<void> }>(
  open: () => Promise<Repository> | Repository,
  removeStore: () => Promise<void>,
): Promise<RepositoryHarness<Repository>> {
  const opened: Repository[] = [];
  const openOne = async () => {
    const repository = await open();
    opened.push(repository);
    return repository;
  };
  const repository = await openOne();
  return {
    repository,
    async reopen() {
      await repository.close();
      return openOne();
    },
    async cleanup() {
      await Promise.all(opened.map((each) => each.close()));
      await removeStore();
    },
  };
}

/** A SQLite repository in a fresh data folder of its own. */
export async function repositoryInFreshFolder<Repository extends { close(): Promise<void> }>(
  open: (dataDir: string) => Repository,
): Promise<RepositoryHarness<Repository>> {
  const dir = await mkdtemp(path.join(tmpdir(), "lab-repository-"));
  return reopenableRepository(
    () => open(dir),
    () => rm(dir, { recursive: true, force: true }),
  );
}
