// Where grading results, the audit log, sign-outs, console recordings, scheduled classes,
// announcements and LTI (launches and grades) live: PostgreSQL when DATABASE_URL is set (several
// replicas can share it), else the SQLite files grading.db, audit.db, ended-sign-ins.db, classes.db,
// announcements.db, lti-launches.db, lti-grades.db and the folder recordings/ in the data folder.
import path from "node:path";
import { PostgresAnnouncementRepository } from "./announcements/postgres-repository.ts";
import type { AnnouncementRepository } from "./announcements/repository.ts";
import { SqliteAnnouncementRepository } from "./announcements/sqlite-repository.ts";
import { PostgresAuditRepository } from "./audit/postgres-repository.ts";
import type { AuditRepository } from "./audit/repository.ts";
import { SqliteAuditRepository } from "./audit/sqlite-repository.ts";
import { PostgresEndedSignInRepository } from "./auth/ended-sign-ins/postgres-repository.ts";
import type { EndedSignInRepository } from "./auth/ended-sign-ins/repository.ts";
import { SqliteEndedSignInRepository } from "./auth/ended-sign-ins/sqlite-repository.ts";
import { PostgresClassRepository } from "./classes/postgres-repository.ts";
import type { ClassRepository } from "./classes/repository.ts";
import { SqliteClassRepository } from "./classes/sqlite-repository.ts";
import { describeDatabaseUrl, type PostgresOptions } from "./db/postgres/database.ts";
import { PostgresGradingRepository } from "./grading/postgres-repository.ts";
import type { GradingRepository } from "./grading/repository.ts";
import { SqliteGradingRepository } from "./grading/sqlite-repository.ts";
import { PostgresLtiLaunchStore } from "./lti/launch/store/postgres-launch-store.ts";
import type { LtiLaunchStore } from "./lti/launch/store/repository.ts";
import { SqliteLtiLaunchStore } from "./lti/launch/store/sqlite-launch-store.ts";
import { PostgresLtiGradesRepository } from "./lti/grades/postgres-repository.ts";
import type { LtiGradesRepository } from "./lti/grades/repository.ts";
import { SqliteLtiGradesRepository } from "./lti/grades/sqlite-repository.ts";
import { FileRecordingStorage } from "./recordings/file-recording-storage.ts";
import { PostgresRecordingStorage } from "./recordings/postgres-recording-storage.ts";
import type { RecordingStorage } from "./recordings/recording-storage.ts";

export interface Stores {
  grading: GradingRepository;
  audit: AuditRepository;
  endedSignIns: EndedSignInRepository;
  recordings: RecordingStorage;
  classes: ClassRepository;
  announcements: AnnouncementRepository;
  ltiLaunches: LtiLaunchStore;
  ltiGrades: LtiGradesRepository;
  /** For the start-up banner: which database, never its password. */
  description: string;
  close(): Promise<void>;
}

export async function openStores(options: {
  dataDir: string;
  databaseUrl: string | undefined;
  log?: PostgresOptions["log"];
}): Promise<Stores> {
  const { dataDir, databaseUrl, log } = options;
  const opened: { close(): Promise<void> }[] = [];
  const keep = <Store extends { close(): Promise<void> }>(store: Store) => {
    opened.push(store);
    return store;
  };
  const closeAll = async () => {
    for (const store of opened) await store.close();
  };
  try {
    if (databaseUrl === undefined) {
      return {
        grading: keep(SqliteGradingRepository.open(dataDir)),
        audit: keep(SqliteAuditRepository.open(dataDir)),
        endedSignIns: keep(SqliteEndedSignInRepository.open(dataDir)),
        recordings: keep(new FileRecordingStorage(path.join(dataDir, "recordings"))),
        classes: keep(SqliteClassRepository.open(dataDir)),
        announcements: keep(SqliteAnnouncementRepository.open(dataDir)),
        ltiLaunches: keep(SqliteLtiLaunchStore.open(dataDir)),
        ltiGrades: keep(SqliteLtiGradesRepository.open(dataDir)),
        description: `SQLite files in ${dataDir}`,
        close: closeAll,
      };
    }
    // Grading runs up to 8 sessions at once; audit entries are one short insert each; sign-outs are
    // one insert each and a poll every 2 s; recordings one insert per batch of each open console's output;
    // announcements one short read per student's poll every few seconds; LTI grades a few upserts per
    // launch and the outbox worker's reads and updates.
    return {
      grading: keep(await PostgresGradingRepository.open(databaseUrl, { poolSize: 8, log })),
      audit: keep(await PostgresAuditRepository.open(databaseUrl, { poolSize: 2, log })),
      endedSignIns: keep(await PostgresEndedSignInRepository.open(databaseUrl, { poolSize: 2, log })),
      recordings: keep(await PostgresRecordingStorage.open(databaseUrl, { poolSize: 4, log })),
      classes: keep(await PostgresClassRepository.open(databaseUrl, { poolSize: 2, log })),
      announcements: keep(await PostgresAnnouncementRepository.open(databaseUrl, { poolSize: 2, log })),
      ltiLaunches: keep(await PostgresLtiLaunchStore.open(databaseUrl, { poolSize: 2, log })),
      ltiGrades: keep(await PostgresLtiGradesRepository.open(databaseUrl, { poolSize: 2, log })),
      description: `PostgreSQL at ${describeDatabaseUrl(databaseUrl)}`,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
