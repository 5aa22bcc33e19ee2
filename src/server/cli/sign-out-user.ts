// `npm run sign-out-user -- <username>`: ends every sign-in of one person made until now, on every
// replica within 2 s, without waiting the 12 hours their cookie lasts (a demoted TA, a removed
// student, a stolen cookie). Writes a cut-off into the store the running console polls (DATA_DIR's
// ended-sign-ins.db, or DATABASE_URL) and an entry into its audit log; the console need not be
// restarted. The instructor's POST /api/admin/sign-outs does the same. Exit code 0 when done, 2 when
// it cannot run.
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { SignOutUserRequest } from "../../common/operations-api.ts";
import { AuditLog } from "../audit/audit-log.ts";
import { PostgresAuditRepository } from "../audit/postgres-repository.ts";
import type { AuditRepository } from "../audit/repository.ts";
import { SqliteAuditRepository } from "../audit/sqlite-repository.ts";
import { PostgresEndedSignInRepository } from "../auth/ended-sign-ins/postgres-repository.ts";
import type { EndedSignInRepository, SignInCutOff } from "../auth/ended-sign-ins/repository.ts";
import { SqliteEndedSignInRepository } from "../auth/ended-sign-ins/sqlite-repository.ts";
import { signInLifetimeMs } from "../auth/sign-ins.ts";
import { describeDatabaseUrl } from "../db/postgres/database.ts";

const usage = `Usage: npm run sign-out-user -- <username>
  Ends every sign-in of <username> made until now, on every replica within 2 s.
  Uses the console's store: DATABASE_URL when set, else the SQLite files in DATA_DIR (default .lab).`;

function stop(message: string): never {
  console.error(`sign-out-user: ${message}`);
  process.exit(2);
}

/** Records the cut-off (and an audit entry); the running console picks it up at its next poll. */
async function signOutUser(options: {
  username: string;
  dataDir: string;
  databaseUrl: string | undefined;
  now?: number;
}): Promise<SignInCutOff> {
  const { username, dataDir, databaseUrl } = options;
  const issuedUpTo = options.now ?? Date.now();
  const cutOff = { username, issuedUpTo, expiresAt: issuedUpTo + signInLifetimeMs };
  const opened: { close(): Promise<void> }[] = [];
  try {
    const store: EndedSignInRepository = databaseUrl
      ? await PostgresEndedSignInRepository.open(databaseUrl, { poolSize: 1 })
      : SqliteEndedSignInRepository.open(dataDir);
    opened.push(store);
    await store.recordCutOff(cutOff);
    const auditRepository: AuditRepository = databaseUrl
      ? await PostgresAuditRepository.open(databaseUrl, { poolSize: 1 })
      : SqliteAuditRepository.open(dataDir);
    opened.push(auditRepository);
    const audit = new AuditLog({
      repository: auditRepository,
      now: () => new Date(issuedUpTo),
      log: { error: (_details, message) => console.error(`sign-out-user: ${message}`) },
    });
    await audit.record({
      action: "sign-out-user",
      actor: "system",
      details: { username, via: "npm run sign-out-user" },
    });
    return cutOff;
  } finally {
    for (const each of opened) await each.close();
  }
}

async function main(): Promise<void> {
  let positionals;
  let values;
  try {
    ({ positionals, values } = parseArgs({
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h", default: false } },
    }));
  } catch (error) {
    stop(`${(error as Error).message}\n\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    return;
  }
  const parsed = SignOutUserRequest.safeParse({ username: positionals[0] });
  if (positionals.length !== 1 || !parsed.success) stop(`name one person to sign out.\n\n${usage}`);
  const { username } = parsed.data;
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const dataDir = path.resolve(process.env.DATA_DIR || ".lab");
  // A mistyped DATA_DIR would get a fresh store that no console reads: better to say so.
  if (!databaseUrl && !existsSync(dataDir)) {
    stop(`the data folder ${dataDir} does not exist: set DATA_DIR as the console has it.`);
  }
  const cutOff = await signOutUser({ username, dataDir, databaseUrl });
  const where = databaseUrl ? `PostgreSQL at ${describeDatabaseUrl(databaseUrl)}` : dataDir;
  console.log(
    `Signed ${username} out: their sign-ins made up to ${new Date(cutOff.issuedUpTo).toISOString()} ` +
      `no longer count (every replica using ${where} within 2 s; their open consoles close). ` +
      `They can sign in again at once; remove them from the users file or the provider to keep them out. ` +
      `Kept until ${new Date(cutOff.expiresAt).toISOString()}.`,
  );
}

main().catch((error: unknown) => stop(error instanceof Error ? error.message : String(error)));
