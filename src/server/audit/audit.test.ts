// The audit log: stored in SQLite and kept across restarts, filtered and paged, never in the way of
// the action it records; and over HTTP, what instructors read and export.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { AuditEntry } from "../../common/operations-api.ts";
import { signInCookie } from "../console/testing/console-client.ts";
import { openDatabase } from "../db/open-database.ts";
import { runOnFaultyDisk, type DiskFault } from "../db/testing/disk-faults.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";
import { auditDatabaseName, auditMigrations } from "./audit-database.ts";
import { AuditLog } from "./audit-log.ts";
import { SqliteAuditRepository } from "./sqlite-repository.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "audit-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function anEntry(overrides: Partial<Omit<AuditEntry, "id">> = {}): Omit<AuditEntry, "id"> {
  return {
    at: "2030-01-01T09:00:00.000Z",
    actor: "alice",
    actorRole: "student",
    action: "launch",
    sessionId: "linux-basics-aaaaaaaa",
    labId: "linux-basics",
    owner: "alice",
    section: "a",
    details: {},
    ip: "127.0.0.1",
    userAgent: "test",
    ...overrides,
  };
}

describe("the SQLite audit repository", () => {
  it("keeps entries across reopening and filters them by person, action, session, lab and time", async () => {
    const first = SqliteAuditRepository.open(dir);
    await first.append(anEntry());
    await first.append(
      anEntry({ at: "2030-01-01T09:10:00.000Z", actor: "tara", actorRole: "ta", action: "end" }),
    );
    await first.append(
      anEntry({
        at: "2030-01-01T10:00:00.000Z",
        actor: "bob",
        owner: "bob",
        sessionId: "git-workflow-bbbbbbbb",
        labId: "git-workflow",
      }),
    );
    await first.close();

    const repository = SqliteAuditRepository.open(dir);
    try {
      const ids = async (filter: Parameters<typeof repository.list>[0]) =>
        (await repository.list(filter, { limit: 10 })).map((entry) => `${entry.actor} ${entry.action}`);
      expect(await ids({})).toEqual(["bob launch", "tara end", "alice launch"]);
      // A person's trail: what they did and what was done to their sessions.
      expect(await ids({ user: "alice" })).toEqual(["tara end", "alice launch"]);
      expect(await ids({ action: "end" })).toEqual(["tara end"]);
      expect(await ids({ session: "git-workflow-bbbbbbbb" })).toEqual(["bob launch"]);
      expect(await ids({ lab: "linux-basics" })).toEqual(["tara end", "alice launch"]);
      // Bounds in any offset are compared as instants.
      expect(await ids({ since: "2030-01-01T10:05:00+01:00", until: "2030-01-01T10:00:00Z" })).toEqual([
        "tara end",
      ]);
    } finally {
      await repository.close();
    }
  });

  it("keeps the entries of an audit.db from before sections, with no section", async () => {
    const before = openDatabase({
      file: path.join(dir, auditDatabaseName),
      migrations: auditMigrations.slice(0, 1),
    });
    before
      .prepare(
        `INSERT INTO audit_log (at, actor, actor_role, action, session_id, lab_id, owner, details, ip, user_agent)
         VALUES ('2030-01-01T09:00:00.000Z', 'alice', 'student', 'launch', 'linux-basics-aaaaaaaa',
                 'linux-basics', 'alice', '{}', NULL, NULL)`,
      )
      .run();
    before.close();
    const repository = SqliteAuditRepository.open(dir);
    try {
      await repository.append(anEntry({ section: "a" }));
      const entries = await repository.list({}, { limit: 10 });
      expect(entries.map((entry) => [entry.actor, entry.section])).toEqual([
        ["alice", "a"],
        ["alice", null],
      ]);
    } finally {
      await repository.close();
    }
  });

  it("pages newest first, and reads an export in batches to the end", async () => {
    const repository = SqliteAuditRepository.open(dir);
    const log = new AuditLog({ repository, now: () => new Date(), log: { error() {} } });
    try {
      for (let index = 0; index < 601; index += 1) await repository.append(anEntry({ details: { index } }));
      const first = await log.list({ limit: 500 });
      expect(first.items).toHaveLength(500);
      expect(first.items[0]?.details.index).toBe(600);
      const last = await log.list({ limit: 500, before: 201 });
      expect(last.items.map((entry) => entry.id)).toEqual(
        Array.from({ length: 200 }, (_, index) => 200 - index),
      );
      expect(last.nextBefore).toBeNull();
      expect(first.nextBefore).toBe(first.items.at(-1)?.id);
      let count = 0;
      for await (const entry of log.entries({})) {
        expect(entry.details.index).toBe(600 - count);
        count += 1;
      }
      expect(count).toBe(601);
    } finally {
      await repository.close();
    }
  });

  it("never fails the action it records: a lost entry is logged and counted", async () => {
    const repository = SqliteAuditRepository.open(dir);
    await repository.close();
    const errors: string[] = [];
    let failures = 0;
    const log = new AuditLog({
      repository,
      now: () => new Date(),
      log: { error: (_object, message) => errors.push(message) },
      onWriteFailed: () => (failures += 1),
    });
    await expect(log.record({ action: "end", actor: "system" })).resolves.toBeUndefined();
    expect(failures).toBe(1);
    expect(errors).toEqual(["audit entry could not be stored"]);
  });

  // On a fresh audit.db, whose write-ahead log must grow for every commit.
  it.each<[DiskFault, RegExp]>([
    ["full", /^The disk holding the database .*audit\.db is full\. Free some space and try again\.$/],
    [
      "write-error",
      /^Reading or writing the database .*audit\.db failed \(a disk error\)\. Check the disk\.$/,
    ],
  ])(
    "logs and counts an entry lost to a %s disk, and never hands out an id for it",
    async (fault, reason) => {
      const report = await runOnFaultyDisk("audit", fault);
      expect(report.record).toEqual({ returned: null });
      expect(report.logged).toEqual([
        { message: "audit entry could not be stored", error: expect.stringMatching(reason) },
      ]);
      expect(report.failuresMetric).toBe("lab_console_audit_write_failures_total 1");
      expect(report.append).toEqual({
        threw: expect.objectContaining({
          type: "DatabaseUnavailableError",
          message: expect.stringMatching(reason),
        }),
      });
      expect(report.stored).toEqual({ actions: ["launch"] });
    },
  );
});

describe("the audit API", () => {
  let bff: TestBff;
  beforeAll(async () => {
    bff = await startTestBff({ labs: [aLab()] });
  });
  afterAll(() => bff?.close());

  it("records sign-ins and launches with who, when and from where, for instructors only", async () => {
    const alice = await bff.signIn("alice");
    const refused = await alice.post("/api/auth/login", { username: "mallory", password: "guess" });
    expect(refused.status).toBe(401);
    expect((await alice.post("/api/sessions", { labId: "linux-basics" })).status).toBe(201);

    expect((await alice.get("/api/audit")).status).toBe(403);
    expect((await (await bff.signIn("tara")).get("/api/audit")).status).toBe(403);
    const ivan = await bff.signIn("ivan");
    const page = await ivan.get("/api/audit?limit=2");
    expect(page.status).toBe(200);
    expect(page.body.items.map((entry: AuditEntry) => `${entry.action} ${entry.actor}`)).toEqual([
      "sign-in ivan",
      "sign-in tara",
    ]);
    const trail = await ivan.get("/api/audit?user=alice");
    expect(trail.body.items.map((entry: AuditEntry) => entry.action)).toEqual(["launch", "sign-in"]);
    expect(trail.body.items[0]).toMatchObject({
      actorRole: "student",
      labId: "linux-basics",
      owner: "alice",
      // The demo users put alice in section "a": entries about her session say so.
      section: "a",
      ip: "127.0.0.1",
    });
    expect(trail.body.items[1]).toMatchObject({ action: "sign-in", section: null });
    expect(trail.body.items[0].userAgent).toEqual(expect.any(String));
    const failed = await ivan.get("/api/audit?action=sign-in-failed");
    expect(failed.body.items).toEqual([expect.objectContaining({ actor: "mallory", actorRole: null })]);
    expect((await ivan.get("/api/audit?action=dance")).status).toBe(400);
  });

  it("records a TA attaching to a student's console as an observer, and detaching", async () => {
    const bob = await bff.signIn("bob");
    const session = (await bob.post("/api/sessions", { labId: "linux-basics" })).body as { id: string };
    const socket = new WebSocket(
      `${bff.url.replace("http", "ws")}/api/sessions/${session.id}/console?mode=observe`,
      {
        headers: { origin: bff.url, cookie: await signInCookie(bff.url, "tara") },
      },
    );
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.close();
    const ivan = await bff.signIn("ivan");
    const log = await eventually(
      () => ivan.get(`/api/audit?session=${session.id}&user=tara`),
      (answer) => answer.body.items.length === 2,
      { what: "attach and detach in the log" },
    );
    expect(log.body.items.map((entry: AuditEntry) => [entry.action, entry.details.as])).toEqual([
      ["console-detach", "observer"],
      ["console-attach", "observer"],
    ]);
  });

  it("exports every matching entry as JSON lines, and records the export", async () => {
    const ivan = await bff.signIn("ivan");
    const answer = await ivan.get("/api/audit/export?action=sign-in");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(answer.headers.get("content-disposition")).toContain("lab-console-audit.jsonl");
    const lines = (answer.body as string)
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditEntry);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.every((entry) => entry.action === "sign-in")).toBe(true);
    const exports = await ivan.get("/api/audit?action=export");
    expect(exports.body.items[0]).toMatchObject({
      actor: "ivan",
      details: { what: "audit", action: "sign-in" },
    });
  });
});
