// Runs a store on a disk that fails its writes, and returns what the store answered. A child process
// gets a user and a mount namespace of its own (unshare: no root needed), mounts a small tmpfs on a
// fresh folder, opens the store there through its real code (disk-fault-scenarios.ts), makes the
// disk fail, tries its writes, and prints a report. The tmpfs is seen by that child only and goes
// away with it, so a full disk never fills the machine's.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

/**
 * - `full`: every free byte of the tmpfs is taken (ENOSPC; SQLite says SQLITE_FULL).
 * - `write-error`: a file-size limit refuses any write past the write-ahead log's end (EFBIG;
 *   SQLITE_IOERR_WRITE), which is what SQLite gets from a database file made immutable while open.
 */
export type DiskFault = "full" | "write-error";

/** What one call did: what it returned, or the error it threw. */
export type Outcome<T> =
  | { returned: T }
  | { threw: { type: string; code: string | null; message: string; causeCode: string | null } };

export interface GradingReport {
  selfCheck: Outcome<{ id: number }>;
  createRun: Outcome<{ id: string }>;
  recordResult: Outcome<{ recorded: boolean }>;
  finishRun: Outcome<{ status: string }>;
  /** Read after the disk is repaired, through the repository opened afresh. */
  stored: { selfCheckIds: number[]; runIds: string[]; doneSessions: string[] };
}

export interface AuditReport {
  /** AuditLog.record resolves whatever happens; this says how. */
  record: Outcome<null>;
  /** The repository itself, called directly. */
  append: Outcome<{ id: number }>;
  /** The error lines AuditLog wrote: their message, and the message of the error they carry. */
  logged: { message: string; error: string | null }[];
  /** The lab_console_audit_write_failures_total line of /metrics as the BFF renders it. */
  failuresMetric: string | null;
  /** Read after the disk is repaired, through the repository opened afresh. */
  stored: { actions: string[] };
}

export interface EndedSignInsReport {
  record: Outcome<null>;
  recordCutOff: Outcome<null>;
  purgeExpired: Outcome<number>;
  /** Read after the disk is repaired, through the repository opened afresh. */
  stored: { ids: string[]; cutOffs: string[] };
}

export interface DiskFaultReports {
  grading: GradingReport;
  audit: AuditReport;
  "ended-sign-ins": EndedSignInsReport;
}

const projectRoot = path.resolve(import.meta.dirname, "../../../..");
const scenarios = path.join(import.meta.dirname, "disk-fault-scenarios.ts");
// Room for a fresh database and its write-ahead log; small enough to fill in a moment.
const tmpfsBytes = 4 * 1024 * 1024;

export async function runOnFaultyDisk<Store extends keyof DiskFaultReports>(
  store: Store,
  fault: DiskFault,
): Promise<DiskFaultReports[Store]> {
  const dir = await mkdtemp(path.join(tmpdir(), "lab-disk-fault-"));
  try {
    const { stdout } = await promisify(execFile)(
      "unshare",
      [
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        `mount -t tmpfs -o size=${tmpfsBytes} lab-disk-fault "$1" && shift && exec "$@"`,
        "sh",
        dir,
        process.execPath,
        "--import",
        "tsx",
        scenarios,
        store,
        fault,
        dir,
      ],
      { cwd: projectRoot, timeout: 30_000 },
    );
    const report = stdout.trimEnd().split("\n").at(-1) ?? "";
    return JSON.parse(report) as DiskFaultReports[Store];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
