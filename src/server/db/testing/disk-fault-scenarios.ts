// The child side of disk-faults.ts: run inside its own tmpfs, as
// `disk-fault-scenarios.ts <store> <fault> <folder>`. Opens the store fresh in the folder (its
// write-ahead log holds only the migrations, so the next commit must grow it), breaks the disk, tries
// every kind of write the store has, repairs the disk, and reads back through the store opened afresh
// what was really stored. Prints the report as the last line of its output.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { auditDatabaseName } from "../../audit/audit-database.ts";
import { AuditLog } from "../../audit/audit-log.ts";
import { SqliteAuditRepository } from "../../audit/sqlite-repository.ts";
import { endedSignInsDatabaseName } from "../../auth/ended-sign-ins/ended-sign-ins-database.ts";
import { SqliteEndedSignInRepository } from "../../auth/ended-sign-ins/sqlite-repository.ts";
import { gradingDatabaseName } from "../../grading/grading-database.ts";
import { SqliteGradingRepository } from "../../grading/sqlite-repository.ts";
import { gradableResult } from "../../grading/testing/result-builders.ts";
import { createAppMetrics } from "../../metrics/app-metrics.ts";
import type {
  AuditReport,
  DiskFault,
  DiskFaultReports,
  EndedSignInsReport,
  GradingReport,
  Outcome,
} from "./disk-faults.ts";

async function outcome<T, R>(work: () => Promise<T>, summarize: (value: T) => R): Promise<Outcome<R>> {
  try {
    return { returned: summarize(await work()) };
  } catch (error) {
    const { code, cause } = error as { code?: unknown; cause?: { code?: unknown } };
    return {
      threw: {
        type: (error as object).constructor.name,
        code: typeof code === "string" ? code : null,
        message: (error as Error).message,
        causeCode: typeof cause?.code === "string" ? cause.code : null,
      },
    };
  }
}

/** Breaks the disk under `database`; returns the repair. */
function breakDisk(fault: DiskFault, dir: string, database: string): () => void {
  if (fault === "full") {
    const filler = path.join(dir, "filler");
    const fd = openSync(filler, "w");
    const block = Buffer.alloc(64 * 1024);
    try {
      // Halving the block on ENOSPC takes the last partly free pages too.
      for (let size = block.length; size >= 512;) {
        try {
          writeSync(fd, block, 0, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
          size /= 2;
        }
      }
    } finally {
      closeSync(fd);
    }
    return () => unlinkSync(filler);
  }
  // Only the soft limit: this process may raise it again, but not a hard one.
  const limit = (value: string) =>
    execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}:`]);
  limit(String(statSync(`${path.join(dir, database)}-wal`).size));
  return () => limit("unlimited");
}

async function grading(fault: DiskFault, dir: string): Promise<GradingReport> {
  const session = "linux-basics-alice001";
  const result = gradableResult({ sessionId: session, owner: "alice" });
  const newRun = (id: string) => ({
    id,
    labId: "linux-basics",
    startedBy: "ivan",
    createdAt: "2030-01-01T10:00:00.000Z",
    selectedSessionIds: null,
    rerunOf: null,
    items: [{ sessionId: session, owner: "alice" }],
  });
  const repository = SqliteGradingRepository.open(dir);
  // Runs to record a result in and to finish, stored while the disk had room.
  await repository.createRun(newRun("run-before"));
  await repository.createRun(newRun("run-to-finish"));
  const repair = breakDisk(fault, dir, gradingDatabaseName);
  const report = {
    selfCheck: await outcome(
      () =>
        repository.recordSelfCheck({
          sessionId: session,
          labId: "linux-basics",
          owner: "alice",
          checkedAt: result.gradedAt,
          result,
        }),
      (check) => ({ id: check.id }),
    ),
    createRun: await outcome(
      () => repository.createRun(newRun("run-on-broken-disk")),
      (run) => ({ id: run.id }),
    ),
    recordResult: await outcome(
      () => repository.recordResult("run-before", session, result),
      (recorded) => ({ recorded: recorded.recorded }),
    ),
    finishRun: await outcome(
      () =>
        repository.finishRun({
          runId: "run-to-finish",
          status: "completed",
          finishedAt: "2030-01-01T10:05:00.000Z",
          closingResults: [{ sessionId: session, result }],
        }),
      (run) => ({ status: run.status }),
    ),
  };
  repair();
  await repository.close();
  const reopened = SqliteGradingRepository.open(dir);
  const runs = await reopened.listRuns({});
  const items = (await Promise.all(runs.map((run) => reopened.listRunItems(run.id)))).flat();
  const stored = {
    selfCheckIds: (await reopened.listSelfChecks(session, 100)).map((check) => check.id),
    runIds: runs.map((run) => run.id).sort(),
    doneSessions: items
      .filter((item) => item.status === "done")
      .map((item) => `${item.runId}/${item.sessionId}`),
  };
  await reopened.close();
  return { ...report, stored };
}

async function audit(fault: DiskFault, dir: string): Promise<AuditReport> {
  const entry = (action: "launch" | "end" | "extend") => ({
    at: "2030-01-01T09:00:00.000Z",
    actor: "alice",
    actorRole: "student" as const,
    action,
    sessionId: "linux-basics-alice001",
    labId: "linux-basics",
    owner: "alice",
    section: null,
    details: {},
    ip: "127.0.0.1",
    userAgent: "test",
  });
  const repository = SqliteAuditRepository.open(dir);
  const logged: AuditReport["logged"] = [];
  const metrics = createAppMetrics();
  // Wired as buildApp (app.ts) wires the console's own audit log.
  const log = new AuditLog({
    repository,
    now: () => new Date("2030-01-01T09:00:00.000Z"),
    log: {
      error: (object, message) => {
        const { err } = object as { err?: unknown };
        logged.push({ message, error: err instanceof Error ? err.message : null });
      },
    },
    onWriteFailed: () => metrics.auditWriteFailures.inc(),
  });
  await repository.append(entry("launch"));
  const repair = breakDisk(fault, dir, auditDatabaseName);
  const report = {
    record: await outcome(
      () =>
        log.record({
          action: "end",
          actor: "system",
          session: { id: "linux-basics-alice001", owner: "alice", section: null },
        }),
      () => null,
    ),
    append: await outcome(
      () => repository.append(entry("extend")),
      (stored) => ({ id: stored.id }),
    ),
  };
  repair();
  const failuresMetric =
    (await metrics.registry.render())
      .split("\n")
      .find((line) => line.startsWith("lab_console_audit_write_failures_total")) ?? null;
  await repository.close();
  const reopened = SqliteAuditRepository.open(dir);
  const stored = { actions: (await reopened.list({}, { limit: 100 })).map((each) => each.action) };
  await reopened.close();
  return { ...report, logged, failuresMetric, stored };
}

async function endedSignIns(fault: DiskFault, dir: string): Promise<EndedSignInsReport> {
  const later = Date.UTC(2030, 0, 1, 21);
  const repository = SqliteEndedSignInRepository.open(dir);
  await repository.record({ id: "signed-out-before", expiresAt: later });
  await repository.record({ id: "expired-before", expiresAt: Date.UTC(2020, 0, 1) });
  const repair = breakDisk(fault, dir, endedSignInsDatabaseName);
  const report = {
    record: await outcome(
      () => repository.record({ id: "signed-out-on-broken-disk", expiresAt: later }),
      () => null,
    ),
    recordCutOff: await outcome(
      () =>
        repository.recordCutOff({ username: "tara", issuedUpTo: Date.UTC(2030, 0, 1, 9), expiresAt: later }),
      () => null,
    ),
    purgeExpired: await outcome(
      () => repository.purgeExpired(Date.UTC(2025, 0, 1)),
      (purged) => purged,
    ),
  };
  repair();
  await repository.close();
  const reopened = SqliteEndedSignInRepository.open(dir);
  const stored = {
    ids: (await reopened.endedSince(0)).endedSignIns.map((each) => each.id),
    cutOffs: (await reopened.cutOffs(Date.UTC(2025, 0, 1))).map((each) => each.username),
  };
  await reopened.close();
  return { ...report, stored };
}

const run: {
  [Store in keyof DiskFaultReports]: (fault: DiskFault, dir: string) => Promise<DiskFaultReports[Store]>;
} = { grading, audit, "ended-sign-ins": endedSignIns };

const [store, fault, dir] = process.argv.slice(2);
if (!(store && store in run) || (fault !== "full" && fault !== "write-error") || !dir) {
  throw new Error("usage: disk-fault-scenarios.ts grading|audit|ended-sign-ins full|write-error <folder>");
}
console.log(JSON.stringify(await run[store as keyof DiskFaultReports](fault, dir)));
