// The repository contract on a real SQLite file, and what SQLite adds: WAL, migrations, and plain
// words when the file is locked, full, damaged or from a newer console.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { runOnFaultyDisk } from "../db/testing/disk-faults.ts";
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { gradingDatabaseName, gradingMigrations, openGradingDatabase } from "./grading-database.ts";
import { SqliteGradingRepository } from "./sqlite-repository.ts";
import { describeGradingRepositoryContract } from "./testing/repository-contract.ts";
import { gradableResult } from "./testing/result-builders.ts";

describeGradingRepositoryContract("SQLite", () =>
  repositoryInFreshFolder((dataDir) => SqliteGradingRepository.open(dataDir)),
);

describe("the SQLite grading database", () => {
  let dir: string;
  const toClose: { close(): unknown }[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "grading-db-"));
  });
  afterEach(async () => {
    for (const each of toClose.splice(0)) await each.close();
    await rm(dir, { recursive: true, force: true });
  });

  function openRepository(options: { busyTimeoutMs?: number } = {}) {
    const db = openGradingDatabase(dir, options);
    const repository = new SqliteGradingRepository(db);
    toClose.push(repository);
    return { db, repository };
  }

  const run = (id: string, sessions: number) => ({
    id,
    labId: "linux-basics",
    startedBy: "ivan",
    createdAt: "2030-01-01T10:00:00.000Z",
    selectedSessionIds: null,
    rerunOf: null,
    items: Array.from({ length: sessions }, (_, index) => ({
      sessionId: `s-${index}`,
      owner: `student-${index}`,
    })),
  });

  it("opens grading.db in the data folder in WAL mode with foreign keys, migrated", () => {
    const { db } = openRepository();
    expect(db.name).toBe(path.join(dir, gradingDatabaseName));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("user_version", { simple: true })).toBe(gradingMigrations.length);
    // Reopening applies nothing twice.
    openRepository();
  });

  it("creates the data folder when it does not exist yet", () => {
    const db = openGradingDatabase(path.join(dir, "nested", "data"));
    toClose.push(db);
    expect(db.name).toBe(path.join(dir, "nested", "data", gradingDatabaseName));
  });

  it("answers database_unavailable while another program holds the write lock, and writes nothing", async () => {
    const { repository } = openRepository({ busyTimeoutMs: 20 });
    const other = new Database(path.join(dir, gradingDatabaseName));
    toClose.push(other);
    other.exec("BEGIN IMMEDIATE");

    const attempt = repository.createRun(run("run-locked", 3));
    await expect(attempt).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(attempt).rejects.toMatchObject({
      code: "database_unavailable",
      message: expect.stringMatching(/is locked by another program\. Try again in a moment\.$/),
    });

    other.exec("ROLLBACK");
    expect(await repository.listRuns({})).toEqual([]);
    // Once the lock is gone the same call succeeds.
    expect((await repository.createRun(run("run-locked", 3))).counts.total).toBe(3);
  });

  it("answers database_unavailable when the disk is full, and keeps no part of the run", async () => {
    const { db, repository } = openRepository();
    await repository.createRun(run("run-small", 1));
    // A database capped at its current size behaves like a full disk for the next pages: the
    // statement itself fails. A real full disk fails the commit instead (the tests below).
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);

    await expect(repository.createRun(run("run-big", 2000))).rejects.toMatchObject({
      code: "database_unavailable",
      message: expect.stringContaining("is full"),
    });
    expect((await repository.listRuns({})).map((each) => each.id)).toEqual(["run-small"]);
    expect(await repository.listRunItems("run-big")).toEqual([]);
  });

  // A fresh database: its write-ahead log holds only the migrations, so every commit has to grow it.
  // (A log already grown by earlier writes is reused in place, and would hide the fault.)
  it("answers database_unavailable for every write when a real disk fills up, and stores none of them", async () => {
    const report = await runOnFaultyDisk("grading", "full");
    const full = {
      threw: {
        type: "DatabaseUnavailableError",
        code: "database_unavailable",
        message: expect.stringMatching(
          /^The disk holding the database .*grading\.db is full\. Free some space/,
        ),
        causeCode: "SQLITE_FULL",
      },
    };
    expect(report).toEqual({
      selfCheck: full,
      createRun: full,
      recordResult: full,
      finishRun: full,
      // Only the two runs created while the disk had room.
      stored: { selfCheckIds: [], runIds: ["run-before", "run-to-finish"], doneSessions: [] },
    });
  });

  it("answers database_unavailable for every write the disk refuses, as from a file made immutable", async () => {
    const report = await runOnFaultyDisk("grading", "write-error");
    const refused = {
      threw: {
        type: "DatabaseUnavailableError",
        code: "database_unavailable",
        message: expect.stringMatching(
          /^Reading or writing the database .*grading\.db failed \(a disk error\)/,
        ),
        causeCode: "SQLITE_IOERR_WRITE",
      },
    };
    expect(report).toEqual({
      selfCheck: refused,
      createRun: refused,
      recordResult: refused,
      finishRun: refused,
      stored: { selfCheckIds: [], runIds: ["run-before", "run-to-finish"], doneSessions: [] },
    });
  });

  it("refuses a file that is not a database, in plain words", async () => {
    await writeFile(
      path.join(dir, gradingDatabaseName),
      "these are not the pages you are looking for\n".repeat(200),
    );
    expect(() => openGradingDatabase(dir)).toThrow(DatabaseUnavailableError);
    expect(() => openGradingDatabase(dir)).toThrow(/is not a database the console can read/);
  });

  it("refuses a database from a newer console instead of guessing its schema", () => {
    const db = new Database(path.join(dir, gradingDatabaseName));
    db.pragma(`user_version = ${gradingMigrations.length + 1}`);
    db.close();
    expect(() => openGradingDatabase(dir)).toThrow(/written by a newer Lab Console/);
  });

  it("refuses a stored result that does not have the result shape", async () => {
    const { db, repository } = openRepository();
    await repository.createRun(run("run-1", 1));
    await repository.recordResult("run-1", "s-0", gradableResult({ sessionId: "s-0", owner: "student-0" }));
    db.prepare('UPDATE run_items SET result = \'{"score": "lots"}\'').run();
    await expect(repository.listRunItems("run-1")).rejects.toThrow();
  });
});
