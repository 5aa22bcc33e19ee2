// A real PostgreSQL for tests. DATABASE_URL when it is set (CI may point at a server it started);
// otherwise a private throwaway server from Debian's binaries on a free loopback port, so that
// `npm test` works on a developer's machine too. Tests never skip for want of PostgreSQL: they fail
// and say which package to install.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { reopenableRepository, type RepositoryHarness } from "../../testing/repository-harness.ts";
import { freePort } from "../../../testing/free-port.ts";

export interface TestPostgres {
  /** A superuser connection to the server's `postgres` database. */
  url: string;
  close(): Promise<void>;
}

export interface TestSchema {
  /** DATABASE_URL for a fresh, empty schema that only this test uses. */
  url: string;
  drop(): Promise<void>;
}

const debianRoot = "/usr/lib/postgresql";
const missingMessage =
  "The PostgreSQL tests need PostgreSQL: install Debian's `postgresql` package (apt-get install postgresql), " +
  "or set DATABASE_URL to a PostgreSQL server the tests may create schemas in.";

export async function startTestPostgres(): Promise<TestPostgres> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return { url: fromEnv, close: async () => undefined };
  return startPrivateServer();
}

/** A schema of its own per test: far cheaper than a database, and dropped with everything in it. */
export async function createTestSchema(server: TestPostgres): Promise<TestSchema> {
  const name = `lab_test_${randomBytes(6).toString("hex")}`;
  await runSql(server.url, `CREATE SCHEMA ${name}`);
  const url = new URL(server.url);
  url.searchParams.set("options", `-c search_path=${name}`);
  return {
    url: url.toString(),
    drop: async () => {
      await runSql(server.url, `DROP SCHEMA IF EXISTS ${name} CASCADE`);
    },
  };
}

/** A repository on a fresh schema of its own (see db/testing/repository-harness.ts). */
export async function repositoryInFreshSchema<Repository extends { close(): Promise<void> }>(
  server: TestPostgres,
  open: (url: string) => Promise<Repository>,
): Promise<RepositoryHarness<Repository>> {
  const schema = await createTestSchema(server);
  return reopenableRepository(
    () => open(schema.url),
    () => schema.drop(),
  );
}

/** One statement on a connection of its own, as another program would run it. */
export async function runSql<Row extends object = object>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

/**
 * From now on every transaction that writes to `table` fails at its COMMIT as PostgreSQL fails one on
 * a full disk (SQLSTATE 53100 disk_full): a deferred constraint trigger lets each statement run and
 * raises when the transaction commits, or, outside a transaction, when the statement's own one does.
 * Created in the schema of `url`, so it goes with the schema.
 */
export async function failCommitsWriting(url: string, table: string): Promise<void> {
  await runSql(
    url,
    `CREATE OR REPLACE FUNCTION lab_test_fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
       END $$;
     CREATE CONSTRAINT TRIGGER lab_test_fail_commit AFTER INSERT OR UPDATE OR DELETE ON ${table}
       DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION lab_test_fail_commit();`,
  );
}

interface Binaries {
  dir: string;
  major: string;
}

function findBinaries(): Binaries {
  const versions = existsSync(debianRoot)
    ? readdirSync(debianRoot)
        .filter((version) => existsSync(path.join(debianRoot, version, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const [major] = versions;
  if (major === undefined) throw new Error(missingMessage);
  return { dir: path.join(debianRoot, major, "bin"), major };
}

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user. */
function runAs(): { prefix: string[]; uid: number | undefined; gid: number | undefined } {
  if (process.getuid?.() !== 0) return { prefix: [], uid: undefined, gid: undefined };
  const id = (flag: string) =>
    Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  const uid = id("-u");
  if (!Number.isInteger(uid) || uid === 0) {
    throw new Error(
      "Running as root, the PostgreSQL tests need the `postgres` user (Debian's postgresql package creates it).",
    );
  }
  return {
    prefix: ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"],
    uid,
    gid: id("-g"),
  };
}

async function startPrivateServer(): Promise<TestPostgres> {
  const binaries = findBinaries();
  const user = runAs();
  const template = await dataTemplate(binaries, user);
  const dir = await mkdtemp(path.join(tmpdir(), "lab-postgres-"));
  try {
    if (user.uid !== undefined) await chown(dir, user.uid, user.gid ?? user.uid);
    const data = path.join(dir, "data");
    run(user.prefix, "cp", ["-a", template, data]);
    const server = await startOnFreePort(binaries, user, dir, data);
    return {
      url: server.url,
      async close() {
        await stop(server.process);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * initdb takes seconds, copying its output a fraction of one: the result is kept in the temp folder
 * (one per PostgreSQL major version) and copied for every server. Renamed into place whole, so a
 * test run that dies half-way never leaves a broken template.
 */
async function dataTemplate(binaries: Binaries, user: ReturnType<typeof runAs>): Promise<string> {
  const template = path.join(tmpdir(), `lab-console-postgres-${binaries.major}-template`);
  if (existsSync(template)) return template;
  const building = await mkdtemp(`${template}.building-`);
  try {
    if (user.uid !== undefined) await chown(building, user.uid, user.gid ?? user.uid);
    const data = path.join(building, "data");
    run(user.prefix, path.join(binaries.dir, "initdb"), [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
    ]);
    await rename(data, template).catch((error: NodeJS.ErrnoException) => {
      // Another test file built it at the same time: theirs is as good as ours.
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
    return template;
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

function run(prefix: string[], command: string, args: string[]): void {
  const [program, ...rest] = [...prefix, command, ...args] as [string, ...string[]];
  const result = spawnSync(program, rest, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(
      `${command} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr}`,
    );
  }
}

interface RunningServer {
  url: string;
  process: ChildProcess;
}

async function startOnFreePort(
  binaries: Binaries,
  user: ReturnType<typeof runAs>,
  dir: string,
  data: string,
): Promise<RunningServer> {
  // The port is free when picked, but another program may take it before the server binds: retry.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const args = [
      // The server dies with the test process, even when that one is killed.
      "--pdeathsig=SIGQUIT",
      path.join(binaries.dir, "postgres"),
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      // Throwaway data: durability only costs time.
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
    ];
    const [program, ...rest] = (
      user.prefix.length > 0 ? [...user.prefix, ...args] : ["setpriv", ...args]
    ) as [string, ...string[]];
    const child = spawn(program, rest, { stdio: ["ignore", "ignore", "pipe"] });
    let output = "";
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    try {
      await waitUntilAccepting(url, child, () => output);
      return { url, process: child };
    } catch (error) {
      await stop(child);
      if (attempt < 3 && /could not bind|Address already in use/.test(output)) continue;
      throw error;
    }
  }
}

async function waitUntilAccepting(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`PostgreSQL exited before accepting connections:\n${output()}`);
    }
    try {
      await runSql(url, "SELECT 1");
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL did not accept connections within 30 s (${String(error)}):\n${output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Fast shutdown (clients disconnected, nothing waited for); killed outright if it hangs. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
