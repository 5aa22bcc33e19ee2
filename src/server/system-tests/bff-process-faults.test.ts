// Faults that need the BFF as a process of its own, started as `npm start` starts it, against an
// emulator with real guests and their grading agents: an agent killed in the middle of its checks,
// the BFF killed with SIGKILL in the middle of a grading run, its database locked or its disk full.
// Every answer, header and log line of those processes is kept; the last test looks for the
// cluster's tokens in them, and in the built files.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GradingRun } from "../../common/grading-api.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { auditDatabaseName } from "../audit/audit-database.ts";
import { endedSignInsDatabaseName } from "../auth/ended-sign-ins/ended-sign-ins-database.ts";
import { hashPassword } from "../auth/passwords.ts";
import { gradingDatabaseName } from "../grading/grading-database.ts";
import { runInConsole } from "../grading/testing/guest-console.ts";
import { SqliteGradingRepository } from "../grading/sqlite-repository.ts";
import { projectRoot } from "../project-root.ts";
import { eventually } from "../../common/testing/patience.ts";
import { TestBrowser, testNamespace, type Answer } from "../testing/test-bff.ts";
import { startBffProcess, type BffProcess } from "./testing/bff-process.ts";

const students = ["s1", "s2", "s3", "s4"];
const labId = "proof-lab";
const labYaml = `id: ${labId}
title: Proof lab
vm:
  size: small
  image: quay.io/containerdisks/fedora:41
checks:
  - id: slow
    title: Takes as long as ~/delay says
    points: 2
    run: sleep "$(cat ~/delay)"
  - id: done
    title: ~/done exists
    run: test -f ~/done
    selfCheck: true
`;

let emulator: TestEmulator;
let workDir: string;
let dataDir: string;
const processes: BffProcess[] = [];
/** Every answer the BFF processes gave in these tests, headers and body. */
const transcript: string[] = [];
const sessionOf = new Map<string, string>();

class RecordingBrowser extends TestBrowser {
  override async request(
    method: string,
    requestPath: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<Answer> {
    const answer = await super.request(method, requestPath, body, headers);
    const answerHeaders: [string, string][] = [];
    answer.headers.forEach((value, name) => answerHeaders.push([name, value]));
    transcript.push(JSON.stringify(answerHeaders), JSON.stringify(answer.body ?? null));
    return answer;
  }
}

async function signIn(bff: BffProcess, username: string): Promise<RecordingBrowser> {
  const browser = new RecordingBrowser(bff.url);
  const answer = await browser.post("/api/auth/login", { username, password: "demo" });
  if (answer.status !== 200) throw new Error(`sign-in as ${username}: ${answer.status}`);
  return browser;
}

function bffEnv(dir: string): Record<string, string> {
  return {
    LAB_KUBECONFIG: emulator.bffKubeconfigPath(),
    AUTH_MODE: "demo",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dir,
    LABS_DIR: path.join(workDir, "labs"),
    LAB_USERS_FILE: path.join(workDir, "users.json"),
    LAB_NAMESPACE: testNamespace,
    AGENT_TOKEN_SECRET: "a-proof-agent-token-secret-that-is-long",
    METRICS_TOKEN: "a-proof-metrics-token",
    LOG_LEVEL: "debug",
    // A killed BFF cannot hand its grading lease over: the next one waits for it to expire.
    LAB_LEASE_DURATION_SECONDS: "2",
  };
}

async function startBff(options: { dataDirTmpfsBytes?: number; dir?: string } = {}): Promise<BffProcess> {
  const bff = await startBffProcess({ env: bffEnv(options.dir ?? dataDir), ...options });
  processes.push(bff);
  return bff;
}

function inGuest(owner: string, command: string): Promise<string> {
  return runInConsole(
    { kubeConfig: emulator.kubeConfig, namespace: testNamespace, vmiName: sessionOf.get(owner)! },
    command,
  );
}

const setDelays = (delays: Record<string, number>) =>
  Promise.all(Object.entries(delays).map(([owner, seconds]) => inGuest(owner, `echo ${seconds} > ~/delay`)));

async function finished(browser: TestBrowser, runId: string): Promise<GradingRun> {
  const answer = await eventually(
    () => browser.get(`/api/grading-runs/${runId}`),
    (each) => each.body?.status !== "running",
    { timeoutMs: 30_000, what: `grading run ${runId} to finish` },
  );
  return GradingRun.parse(answer.body);
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  workDir = mkdtempSync(path.join(tmpdir(), "proof-bff-"));
  dataDir = path.join(workDir, "data");
  mkdirSync(path.join(workDir, "labs"));
  writeFileSync(path.join(workDir, "labs", `${labId}.yaml`), labYaml);
  const passwordHash = await hashPassword("demo");
  const users = [
    ...students.map((username) => ({ username, role: "student" })),
    { username: "ivan", role: "instructor" },
  ];
  writeFileSync(
    path.join(workDir, "users.json"),
    JSON.stringify({ users: users.map((user) => ({ ...user, passwordHash })) }),
  );
}, 60_000);

afterAll(async () => {
  for (const bff of processes) await bff.kill("SIGKILL");
  await emulator?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("the grading agent killed in the middle of its checks", () => {
  it("leaves that session ungradable and retryable; the other results stand", async () => {
    const bff = await startBff();
    for (const owner of students) {
      const browser = await signIn(bff, owner);
      const launched = await browser.post("/api/sessions", { labId });
      expect(launched.status).toBe(201);
      sessionOf.set(owner, launched.body.id);
    }
    const ivan = await signIn(bff, "ivan");
    await eventually(
      () => ivan.get(`/api/sessions?lab=${labId}`),
      (answer) => answer.body?.counts?.running === students.length,
      { timeoutMs: 20_000, what: "every session running" },
    );
    await setDelays({ s1: 0, s2: 0, s3: 30, s4: 0 });

    const started = await ivan.post(`/api/labs/${labId}/grading-runs`);
    expect(started.status).toBe(201);
    const runId: string = started.body.id;
    await eventually(
      () => ivan.get(`/api/grading-runs/${runId}`),
      (answer) => answer.body.progress.done === 3,
      { timeoutMs: 20_000, what: "the three quick sessions graded" },
    );
    // The agent runs as the guest's root, so the student cannot kill it; an OOM kill can.
    expect(
      await emulator.emulator.faults.killGuestProcesses(testNamespace, sessionOf.get("s3")!, "lab_agent.pyz"),
    ).toBe(1);

    const run = await finished(ivan, runId);
    expect(run.status).toBe("completed");
    const byOwner = new Map(run.items.map((item) => [item.owner, item.result]));
    expect(byOwner.get("s3")).toMatchObject({ gradable: false, score: null });
    expect(byOwner.get("s3")?.reason).toMatch(/grading agent/);
    for (const owner of ["s1", "s2", "s4"])
      expect(byOwner.get(owner)).toMatchObject({ gradable: true, score: 2 });

    // systemd brings the agent back a second later (Restart=always): a re-run grades s3 too, and the
    // results of the first run stand.
    await setDelays({ s3: 0 });
    const rerun = await eventually(
      () => ivan.post(`/api/grading-runs/${runId}/rerun`),
      (answer) => answer.status === 201,
      { what: "the re-run to start" },
    );
    expect(rerun.body.items.map((item: { owner: string }) => item.owner).sort()).toEqual(students);
    const second = await finished(ivan, rerun.body.id);
    expect(second.items.find((item) => item.owner === "s3")?.result).toMatchObject({
      gradable: true,
      score: 2,
    });
    const grades = await ivan.get(`/api/labs/${labId}/grades.json`);
    expect(grades.status).toBe(200);
    await bff.kill("SIGTERM");
    // Four VMs, two runs and an agent's restart: over a minute on a busy machine.
  }, 120_000);
});

describe("the BFF killed with SIGKILL in the middle of a grading run", () => {
  it("loses no result and records none twice once it is started again", async () => {
    await setDelays({ s1: 0, s2: 0.3, s3: 2, s4: 2 });
    const first = await startBff();
    const ivan = await signIn(first, "ivan");
    await eventually(
      () => ivan.get("/api/readyz"),
      (answer) => answer.status === 200,
      { what: "the BFF ready" },
    );
    const started = await ivan.post(`/api/labs/${labId}/grading-runs`);
    expect(started.status).toBe(201);
    const runId: string = started.body.id;
    await eventually(
      () => ivan.get(`/api/grading-runs/${runId}`),
      (answer) => answer.body.progress.done >= 1,
      { timeoutMs: 20_000, what: "a first result" },
    );
    await first.kill("SIGKILL");

    // What the killed process had committed, read from its database file.
    const killedWith = SqliteGradingRepository.open(dataDir);
    const before = await killedWith.listRunItems(runId);
    await killedWith.close();
    const recorded = before.filter((item) => item.status === "done");
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    expect(recorded.length).toBeLessThan(students.length);

    const restartedAt = Date.now();
    const second = await startBff();
    const run = await finished(await signIn(second, "ivan"), runId);
    console.info(
      `[proof] SIGKILL with ${recorded.length} of ${students.length} results committed: run completed ${Date.now() - restartedAt} ms after the restart began`,
    );
    expect(run.status).toBe("completed");
    expect(run.items.map((item) => item.owner).sort()).toEqual(students);
    expect(run.progress).toEqual({ total: 4, done: 4, ungradable: 0 });
    for (const earlier of recorded) {
      expect(run.items.find((item) => item.sessionId === earlier.sessionId)?.result).toEqual(earlier.result);
    }
    const db = new Database(path.join(dataDir, gradingDatabaseName), { readonly: true });
    try {
      const tables = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%session_id%' AND sql LIKE '%run_id%'",
        )
        .all() as { name: string }[];
      expect(tables.length).toBeGreaterThan(0);
      for (const { name } of tables) {
        const rows = db
          .prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT session_id) AS d FROM "${name}" WHERE run_id = ?`)
          .get(runId) as {
          n: number;
          d: number;
        };
        expect(rows).toEqual({ n: students.length, d: students.length });
      }
    } finally {
      db.close();
    }
    await second.kill("SIGTERM");
  }, 90_000);
});

describe("the grading database locked or its disk full", () => {
  it("answers 503 with the reason and writes nothing, then works once the disk has room", async () => {
    const fullDir = path.join(workDir, "tmpfs-data");
    await mkdir(fullDir);
    const bff = await startBff({ dir: fullDir, dataDirTmpfsBytes: 8 * 1024 * 1024 });
    // The folder as the BFF sees it, on its own tmpfs.
    const seen = `/proc/${bff.pid}/root${fullDir}`;
    const ivan = await signIn(bff, "ivan");
    const s1 = await signIn(bff, "s1");
    const s2 = await signIn(bff, "s2");
    await eventually(
      () => ivan.get("/api/readyz"),
      (answer) => answer.status === 200,
      { what: "the BFF ready" },
    );
    const runs = async () => (await ivan.get(`/api/labs/${labId}/grading-runs`)).body.items;
    expect(await runs()).toEqual([]);

    const release = await holdWriteLock(bff.pid, path.join(fullDir, gradingDatabaseName));
    const locked = await ivan.post(`/api/labs/${labId}/grading-runs`);
    const lockedCheck = await s1.post(`/api/sessions/${sessionOf.get("s1")}/checks`);
    await release();
    for (const answer of [locked, lockedCheck]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toEqual({
        code: "database_unavailable",
        message: `The database ${path.join(fullDir, gradingDatabaseName)} is locked by another program. Try again in a moment.`,
      });
    }
    expect(await runs()).toEqual([]);

    const filler = path.join(seen, "filler");
    await writeFile(filler, Buffer.alloc(16 * 1024 * 1024)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOSPC") throw error;
    });
    const full = await ivan.post(`/api/labs/${labId}/grading-runs`);
    const fullCheck = await s2.post(`/api/sessions/${sessionOf.get("s2")}/checks`);
    for (const answer of [full, fullCheck]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toEqual({
        code: "database_unavailable",
        message: `The disk holding the database ${path.join(fullDir, gradingDatabaseName)} is full. Free some space and try again.`,
      });
    }
    expect(await runs()).toEqual([]);
    expect((await s2.get(`/api/sessions/${sessionOf.get("s2")}/checks`)).body.items).toEqual([]);
    // A sign-in goes ahead on a full disk; its audit entry cannot, and the log and /metrics say so.
    await signIn(bff, "s3");
    const metrics = await ivan.get("/metrics", { authorization: "Bearer a-proof-metrics-token" });
    expect(metrics.body).toMatch(/^lab_console_audit_write_failures_total 1$/m);
    // The line may reach this process's end of the pipe after the answer did.
    const lostEntries = await eventually(
      async () =>
        bff
          .output()
          .split("\n")
          .filter((line) => line.includes("audit entry could not be stored")),
      (lines) => lines.length > 0,
      { what: "the lost audit entry in the BFF's log" },
    );
    expect(lostEntries).toHaveLength(1);
    expect(lostEntries[0]).toContain(
      `The disk holding the database ${path.join(fullDir, auditDatabaseName)} is full. Free some space and try again.`,
    );
    // A sign-out that cannot be stored says why, like every other store (it answered a bare 500).
    const signOut = await ivan.post("/api/admin/sign-outs", { username: "s1" });
    expect(signOut.status).toBe(503);
    expect(signOut.body.error).toEqual({
      code: "database_unavailable",
      message: `The disk holding the database ${path.join(fullDir, endedSignInsDatabaseName)} is full. Free some space and try again.`,
    });

    await unlink(filler);
    const roomAgain = await ivan.post(`/api/labs/${labId}/grading-runs`);
    expect(roomAgain.status).toBe(201);
    expect(roomAgain.body.progress.total).toBe(students.length);
    expect((await runs()).map((each: { id: string }) => each.id)).toEqual([roomAgain.body.id]);
    await bff.kill("SIGTERM");
  });
});

describe("the cluster's credentials", () => {
  it("appear in no answer, no log line and no built file", async () => {
    const secrets = {
      "the admin token": emulator.emulator.adminToken,
      "the BFF's token": (await tokenOf(emulator.bffKubeconfigPath())) ?? "",
    };
    for (const secret of Object.values(secrets)) expect(secret.length).toBeGreaterThanOrEqual(16);
    expect(transcript.length).toBeGreaterThan(50);
    const logs = processes.map((bff) => bff.output());
    // The logs are real: at debug level the processes said plenty.
    expect(logs.join("").length).toBeGreaterThan(1000);

    // Nor the tokens of the developer's own `npm start` emulator, when there is one.
    const builtOnly = await localTokens();
    // The user data the BFF wrote into every VM (agent and all) is built by it too.
    const secretList = await jsonRequest(
      emulator.emulator,
      "GET",
      `/api/v1/namespaces/${testNamespace}/secrets`,
    );
    const userData = (secretList.json as { items: { data?: Record<string, string> }[] }).items.flatMap(
      (secret) =>
        Object.values(secret.data ?? {}).map((value) => Buffer.from(value, "base64").toString("latin1")),
    );
    expect(userData.length).toBeGreaterThanOrEqual(students.length);
    const builtFiles = await filesUnder(path.join(projectRoot, "dist"));
    const built = await Promise.all(builtFiles.map((file) => readFile(file, "latin1")));
    const leaks: string[] = [];
    for (const [name, secret] of Object.entries(secrets)) {
      if (transcript.some((text) => text.includes(secret))) leaks.push(`${name} in an API answer`);
      if (logs.some((text) => text.includes(secret))) leaks.push(`${name} in the BFF's output`);
      if (userData.some((text) => text.includes(secret))) leaks.push(`${name} in a VM's user data`);
    }
    for (const [name, secret] of [...Object.entries(secrets), ...builtOnly]) {
      builtFiles.forEach((file, index) => {
        if (built[index]!.includes(secret)) leaks.push(`${name} in ${file}`);
      });
    }
    expect(leaks).toEqual([]);
  });
});

/**
 * Holds a database's write lock from a process inside the BFF's mount namespace (SQLite resolves
 * /proc/<pid>/root back to the host's root, so the test cannot open it from here). Returns release.
 */
async function holdWriteLock(pid: number, file: string): Promise<() => Promise<void>> {
  const script = [
    `const db = new (require(process.argv[2]))(process.argv[1], { fileMustExist: true });`,
    `db.exec("BEGIN IMMEDIATE");`,
    `console.log("locked");`,
    `process.stdin.on("end", () => { db.exec("ROLLBACK"); db.close(); }).resume();`,
  ].join("\n");
  const sqlite = path.join(projectRoot, "node_modules/better-sqlite3");
  const holder = spawn(
    "nsenter",
    ["--target", String(pid), "--mount", process.execPath, "-e", script, file, sqlite],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = new Promise((resolve) => holder.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once("data", () => resolve());
    void exited.then(() => reject(new Error("the lock holder exited before it held the lock")));
  });
  return async () => {
    holder.stdin.end();
    await exited;
  };
}

async function tokenOf(kubeconfigPath: string): Promise<string | undefined> {
  const config = parseYaml(await readFile(kubeconfigPath, "utf8")) as {
    users?: { user?: { token?: string } }[];
  };
  return config.users?.[0]?.user?.token;
}

async function localTokens(): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for (const file of [".lab/kubeconfig", ".lab/lab-console.kubeconfig"]) {
    const full = path.join(projectRoot, file);
    const token = existsSync(full) ? await tokenOf(full) : undefined;
    if (token) found.push([`the token in ${file}`, token]);
  }
  return found;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}
