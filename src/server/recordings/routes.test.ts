// The recording routes over both storages, on a real socket: the same answers whether recordings are
// files or rows in PostgreSQL, each person seeing those of the sessions they may see (sections
// included), and database_unavailable when PostgreSQL cannot be read.
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import { encodeSignIn, signInCookieName } from "../auth/current-user.ts";
import { SqliteEndedSignInRepository } from "../auth/ended-sign-ins/sqlite-repository.ts";
import { SignIns } from "../auth/sign-ins.ts";
import {
  createTestSchema,
  startTestPostgres,
  type TestPostgres,
  type TestSchema,
} from "../db/postgres/testing/test-postgres.ts";
import { sendError } from "../http/errors.ts";
import { eventLine } from "./asciicast.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import { PostgresRecordingStorage } from "./postgres-recording-storage.ts";
import type { RecordingStorage } from "./recording-storage.ts";
import { RecordingStore } from "./recording-store.ts";
import { registerRecordingRoutes } from "./routes.ts";
import { expectGapAccountsFor, expectWellFormed, floodText } from "./testing/cast.ts";
import { aHeader } from "./testing/storage-contract.ts";
import { enforceAccessForTests } from "../access/testing/policy-for-tests.ts";

const cookieSecret = "a-test-secret-that-is-long-enough-to-sign";
let dataDir: string;
let endedSignIns: SqliteEndedSignInRepository;
let signIns: SignIns;
let postgres: TestPostgres;
let schema: TestSchema;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "recording-routes-"));
  endedSignIns = SqliteEndedSignInRepository.open(dataDir);
  signIns = await SignIns.open({ store: endedSignIns });
  postgres = await startTestPostgres();
  schema = await createTestSchema(postgres);
});

afterAll(async () => {
  for (const each of opened.reverse()) await each.close();
  await signIns?.close();
  await endedSignIns?.close();
  await schema?.drop();
  await postgres?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The recording routes alone, over `storage`, listening on a loopback port. */
async function serve(
  storage: RecordingStorage,
  limits: { maxBytes?: number; tailBytes?: number; tailWriteIntervalMs?: number } = {},
) {
  const app: FastifyInstance = Fastify();
  await app.register(fastifyCookie, { secret: cookieSecret });
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  const recordings = new RecordingStore({
    storage,
    maxBytes: 100_000,
    ...limits,
    retentionMs: 86_400_000,
    sessionOf: async () => ({ labId: "lab-one", section: null }),
    log: { warn: () => undefined },
  });
  enforceAccessForTests(app, { signIns });
  registerRecordingRoutes(app, { recordings });
  await app.listen({ host: "127.0.0.1", port: 0 });
  opened.push(app, storage);
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    recordings,
    get: (as: Me, route: string) =>
      fetch(url + route, {
        headers: {
          cookie: `${signInCookieName}=${app.signCookie(encodeSignIn(signIns.create(as)))}`,
        },
      }),
  };
}

const alice: Me = { username: "alice", role: "student", sections: ["a"] };
const bob: Me = { username: "bob", role: "student", sections: ["a"] };
const tara: Me = { username: "tara", role: "ta", sections: [] };
const tom: Me = { username: "tom", role: "ta", sections: ["b"] };
const ivan: Me = { username: "ivan", role: "instructor", sections: [] };

/** Status, the headers a download depends on, and the body, for comparing two answers. */
async function answerOf(response: Response) {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    disposition: response.headers.get("content-disposition"),
    length: response.headers.get("content-length"),
    cacheControl: response.headers.get("cache-control"),
    body: await response.text(),
  };
}

describe("the recording routes", () => {
  it("answer the same over files and over PostgreSQL", async () => {
    const stores = [
      new FileRecordingStorage(path.join(dataDir, "recordings")),
      await PostgresRecordingStorage.open(schema.url),
    ];
    const answers = [];
    for (const storage of stores) {
      const header = aHeader("s-both", "alice", "lab-one");
      await storage.append("s-both", { header, text: eventLine(0.25, "o", "ünïcødé €\r\n") });
      await storage.append("s-both", { header, text: eventLine(0.5, "o", "more") });
      const api = await serve(storage);
      answers.push({
        owner: await answerOf(await api.get(alice, "/api/sessions/s-both/recording")),
        staff: await answerOf(await api.get(tara, "/api/sessions/s-both/recording")),
        other: await answerOf(await api.get(bob, "/api/sessions/s-both/recording")),
        none: await answerOf(await api.get(tara, "/api/sessions/s-none/recording")),
        list: await answerOf(await api.get(tara, "/api/recordings?lab=lab-one&student=alice")),
        otherLab: await answerOf(await api.get(tara, "/api/recordings?lab=lab-two")),
      });
    }
    const [files, rows] = answers;
    expect(files!.owner).toMatchObject({
      status: 200,
      type: "application/x-asciicast",
      disposition: 'attachment; filename="s-both.cast"',
      cacheControl: "no-store",
    });
    expect(Number(files!.owner.length)).toBe(Buffer.byteLength(files!.owner.body));
    expect(files!.staff).toEqual(files!.owner);
    expect(files!.other.status).toBe(404);
    expect(files!.none.status).toBe(404);
    expect(JSON.parse(files!.list.body).items).toHaveLength(1);
    expect(JSON.parse(files!.otherLab.body).items).toEqual([]);
    // Apart from when each was last written, PostgreSQL answers exactly as the files do.
    const withoutWriteTimes = (answer: typeof files) => ({
      ...answer,
      list: { ...answer!.list, body: answer!.list.body.replace(/"lastWrittenAt":"[^"]*"/g, "") },
    });
    expect(withoutWriteTimes(rows)).toEqual(withoutWriteTimes(files));
  });

  it("show a TA only the recordings of their sections' sessions, over files and over PostgreSQL", async () => {
    const stores = [
      new FileRecordingStorage(path.join(dataDir, "sections")),
      await PostgresRecordingStorage.open(schema.url),
    ];
    for (const storage of stores) {
      // No session behind them any more: the header alone says whose and which section's they are.
      for (const [id, owner, section] of [
        ["s-in-a", "alice", "a"],
        ["s-in-b", "carol", "b"],
        ["s-before-sections", "dan", undefined],
      ] as const) {
        const { lab_console, ...header } = aHeader(id, owner, "lab-sections");
        await storage.append(id, {
          header: { ...header, lab_console: { ...lab_console, ...(section && { section }) } },
          text: eventLine(0.25, "o", "hello\r\n"),
        });
      }
      const api = await serve(storage);
      const listed = async (as: Me) =>
        (
          (await (await api.get(as, "/api/recordings?lab=lab-sections")).json()).items as {
            sessionId: string;
          }[]
        )
          .map((item) => item.sessionId)
          .sort();
      const download = async (as: Me, id: string) =>
        (await api.get(as, `/api/sessions/${id}/recording`)).status;

      expect(await listed(tom)).toEqual(["s-in-b"]);
      expect(await download(tom, "s-in-b")).toBe(200);
      expect(await download(tom, "s-in-a")).toBe(404);
      expect(await download(tom, "s-before-sections")).toBe(404);
      expect((await (await api.get(tom, "/api/recordings?student=alice")).json()).items).toEqual([]);
      for (const everything of [tara, ivan]) {
        expect(await listed(everything)).toEqual(["s-before-sections", "s-in-a", "s-in-b"]);
        expect(await download(everything, "s-in-a")).toBe(200);
      }
      expect(await listed(alice)).toEqual(["s-in-a"]);
      expect(await download(bob, "s-in-a")).toBe(404);
    }
  });

  it("send a flooded recording whole, its content-length true, while its tail keeps being replaced", async () => {
    const cap = { maxBytes: 64 * 1024, tailBytes: 8 * 1024 };
    const stores = [
      new FileRecordingStorage(path.join(dataDir, "flooded")),
      await PostgresRecordingStorage.open(schema.url),
    ];
    for (const storage of stores) {
      // The tail is replaced every few milliseconds here (once a second in production), so that
      // downloads keep meeting a tail replaced between measuring the recording and reading it.
      const api = await serve(storage, { ...cap, tailWriteIntervalMs: 2 });
      const recorder = api.recordings.recorderFor(
        { id: "s-flooded", owner: "alice" },
        { cols: 80, rows: 24 },
      );
      let printed = "";
      const print = (output: string) => {
        for (let at = 0; at < output.length; at += 1_000) {
          recorder.output(Buffer.from(output.slice(at, at + 1_000)));
        }
        printed += output;
      };
      print("the-beginning\r\n");
      let downloads = 0;
      for (let round = 0; round < 30; round += 1) {
        print(floodText(8 * 1024, `round ${round}`));
        const answer = await answerOf(await api.get(tara, "/api/sessions/s-flooded/recording"));
        // Before its first batch is stored there is no recording yet.
        if (answer.status === 404) continue;
        downloads += 1;
        expect(answer.status).toBe(200);
        expect(Number(answer.length)).toBe(Buffer.byteLength(answer.body));
        expectWellFormed(answer.body, cap.maxBytes);
      }
      expect(downloads).toBeGreaterThan(20);
      print("after-the-flood\r\n");
      await recorder.close();
      const last = await answerOf(await api.get(alice, "/api/sessions/s-flooded/recording"));
      expect(Number(last.length)).toBe(Buffer.byteLength(last.body));
      expectWellFormed(last.body, cap.maxBytes);
      expect(last.body.endsWith('"after-the-flood\\r\\n"]\n')).toBe(true);
      expectGapAccountsFor(last.body, printed);
    }
  });

  it("answer 503 database_unavailable while PostgreSQL cannot be read", async () => {
    const storage = await PostgresRecordingStorage.open(schema.url, { lockTimeoutMs: 100 });
    const api = await serve(storage);
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("LOCK TABLE console_recordings IN ACCESS EXCLUSIVE MODE");
      for (const route of ["/api/sessions/s-both/recording", "/api/recordings"]) {
        const answer = await api.get(tara, route);
        expect(answer.status).toBe(503);
        expect(await answer.json()).toEqual({
          error: {
            code: "database_unavailable",
            message: expect.stringMatching(/is locked by another program/),
          },
        });
      }
    } finally {
      await other.end();
    }
  });
});
