// Where grading results and the audit log live: PostgreSQL when DATABASE_URL is set (several
// replicas can share it), else the SQLite files grading.db and audit.db in the data folder.
import { PostgresAuditRepository } from "../audit/postgres-repository.ts";
import type { AuditRepository } from "../audit/repository.ts";
import { SqliteAuditRepository } from "../audit/sqlite-repository.ts";
import { PostgresGradingRepository } from "../grading/postgres-repository.ts";
import type { GradingRepository } from "../grading/repository.ts";
import { SqliteGradingRepository } from "../grading/sqlite-repository.ts";
import { describeDatabaseUrl, type PostgresOptions } from "./postgres/database.ts";

export interface Stores {
  grading: GradingRepository;
  audit: AuditRepository;
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
  if (databaseUrl === undefined) {
    const grading = SqliteGradingRepository.open(dataDir);
    try {
      return storesOf(grading, SqliteAuditRepository.open(dataDir), `SQLite files in ${dataDir}`);
    } catch (error) {
      await grading.close();
      throw error;
    }
  }
  // Grading runs up to 8 sessions at once; audit entries are one short insert each.
  const grading = await PostgresGradingRepository.open(databaseUrl, { poolSize: 8, log });
  try {
    const audit = await PostgresAuditRepository.open(databaseUrl, { poolSize: 2, log });
    return storesOf(grading, audit, `PostgreSQL at ${describeDatabaseUrl(databaseUrl)}`);
  } catch (error) {
    await grading.close();
    throw error;
  }
}

function storesOf(grading: GradingRepository, audit: AuditRepository, description: string): Stores {
  return {
    grading,
    audit,
    description,
    async close() {
      await grading.close();
      await audit.close();
    },
  };
}
