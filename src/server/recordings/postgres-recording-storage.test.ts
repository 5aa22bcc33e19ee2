// The recording storage contract on a real PostgreSQL, and what the console sees when the database
// is in trouble: recording goes quiet with a warning, reading fails with database_unavailable, and a
// closing console waits for its recording a bounded while only.
import { text } from "node:stream/consumers";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { PostgresDatabase } from "../db/postgres/database.ts";
import {
  createTestSchema,
  repositoryInFreshSchema,
  runSql,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { patient, eventually } from "../../common/testing/patience.ts";
import { eventLine, headerLine } from "./asciicast.ts";
import { PostgresRecordingStorage } from "./postgres-recording-storage.ts";
import { postgresRecordingsSchema } from "./postgres-schema.ts";
import { RecordingStore } from "./recording-store.ts";
import { expectWellFormed, outputOf } from "./testing/cast.ts";
import { anImage, paint, rgbAt, screenAt, screenEventsOf, scribble } from "./testing/screen-recording.ts";
import { aHeader, describeRecordingStorageContract } from "./testing/storage-contract.ts";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.close());

describeRecordingStorageContract("PostgreSQL", () =>
  repositoryInFreshSchema(server, (url) => PostgresRecordingStorage.open(url)),
);

/** A store on a fresh schema, and another connection that can lock its table as another program would. */
async function storeWithALockingNeighbour(options: { lockTimeoutMs: number; closeTimeoutMs?: number }) {
  const schema = await createTestSchema(server);
  const storage = await PostgresRecordingStorage.open(schema.url, { lockTimeoutMs: options.lockTimeoutMs });
  const other = new pg.Client({ connectionString: schema.url });
  await other.connect();
  const warnings: { message?: string }[] = [];
  const store = new RecordingStore({
    storage,
    maxBytes: 10_000,
    retentionMs: 86_400_000,
    sessionOf: async () => ({ labId: "lab-one", section: null }),
    log: { warn: (_details: unknown, message?: string) => void warnings.push({ message }) },
    closeTimeoutMs: options.closeTimeoutMs,
  });
  return {
    storage,
    store,
    warnings,
    async lock() {
      await other.query("BEGIN");
      await other.query("LOCK TABLE console_recordings IN ACCESS EXCLUSIVE MODE");
    },
    unlock: () => other.query("ROLLBACK"),
    async close() {
      await other.query("ROLLBACK");
      await other.end();
      await storage.close();
      await schema.drop();
    },
  };
}

describe("PostgreSQL recordings while the database is locked", () => {
  it("drop the output with a warning, and refuse reads with database_unavailable", async () => {
    const { storage, store, warnings, lock, unlock, close } = await storeWithALockingNeighbour({
      lockTimeoutMs: 100,
    });
    try {
      await storage.append("s-locked", {
        header: aHeader("s-locked"),
        text: '[0.1,"o","hi"]\n',
      });
      await lock();

      store
        .recorderFor({ id: "s-locked", owner: "alice" }, { cols: 80, rows: 24 })
        .output(Buffer.from("lost"));
      await eventually(
        async () => warnings,
        (logged) => logged.length > 0,
        { what: "the warning" },
      );
      expect(warnings).toEqual([{ message: "console recording could not be opened" }]);
      const error = await store.find("s-locked").catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toMatch(/is locked by another program/);

      await unlock();
      expect(await store.find("s-locked")).toMatchObject({ tailBytes: 0 });
    } finally {
      await close();
    }
  });
});

describe("a console closing while the database is locked", () => {
  it("waits for its recording at most the close timeout, then goes on with a warning", async () => {
    const { store, warnings, lock, close } = await storeWithALockingNeighbour({
      lockTimeoutMs: 10_000,
      closeTimeoutMs: 300,
    });
    try {
      await lock();
      const recorder = store.recorderFor({ id: "s-stuck", owner: "alice" }, { cols: 80, rows: 24 });
      recorder.output(Buffer.from("stuck"));
      const started = performance.now();
      await recorder.close();
      const waitedMs = performance.now() - started;
      expect(waitedMs).toBeGreaterThanOrEqual(290);
      expect(waitedMs).toBeLessThan(patient(3_000));
      expect(warnings).toEqual([
        {
          message:
            "console recording not stored in time as its console closed; its end may be missing or out of order",
        },
      ]);
    } finally {
      await close();
    }
  });
});

describe("the recordings list in PostgreSQL", () => {
  it("has an index for each filter, by lab and by owner", async () => {
    const schema = await createTestSchema(server);
    const storage = await PostgresRecordingStorage.open(schema.url);
    try {
      const indexes = await runSql<{ indexdef: string }>(
        schema.url,
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'console_recordings'",
      );
      const columns = indexes.map(({ indexdef }) => /\((.*)\)$/.exec(indexdef)?.[1]);
      expect(columns).toEqual(expect.arrayContaining(["lab_id, started_at", "owner, started_at"]));
    } finally {
      await storage.close();
      await schema.drop();
    }
  });
});

describe("PostgreSQL recordings stored before a recording had a tail", () => {
  it("are upgraded in place: they read as they were, and a console goes on after them", async () => {
    const schema = await createTestSchema(server);
    try {
      // The tables as the version before left them, holding a recording it stopped at its cap.
      const previous = await PostgresDatabase.open(schema.url, {
        ...postgresRecordingsSchema,
        migrations: postgresRecordingsSchema.migrations.slice(0, 2),
      });
      const header = headerLine({ ...aHeader("s-before"), timestamp: Math.floor(Date.now() / 1000) - 60 });
      let old = "";
      for (let line = 0; Buffer.byteLength(header + old) < 3_900; line += 1) {
        old += eventLine(1 + line / 1_000, "o", `old ${line}\r\n`);
      }
      old += eventLine(2, "m", "recording stopped: size limit reached");
      await previous.query(
        `INSERT INTO console_recordings
           (session_id, owner, lab_id, header, started_at, last_written_at, bytes, chunks, capped)
         VALUES ('s-before', 'alice', 'lab-one', $1, now(), now(), $2, 1, true)`,
        [header, Buffer.byteLength(header + old)],
      );
      await previous.query(
        "INSERT INTO console_recording_chunks (session_id, seq, text) VALUES ('s-before', 1, $1)",
        [old],
      );
      await previous.close();

      const storage = await PostgresRecordingStorage.open(schema.url);
      try {
        const found = await storage.find("s-before");
        expect(found).toMatchObject({ bytes: Buffer.byteLength(header + old), tailBytes: 0 });
        expect(await text((await storage.read("s-before", found!.bytes))!)).toBe(header + old);

        const store = new RecordingStore({
          storage,
          maxBytes: 4 * 1024,
          tailBytes: 1024,
          retentionMs: 86_400_000,
          sessionOf: async () => ({ labId: "lab-one", section: null }),
          log: { warn: () => undefined },
        });
        const recorder = store.recorderFor({ id: "s-before", owner: "alice" }, { cols: 80, rows: 24 });
        recorder.output(Buffer.from("after-the-upgrade\r\n"));
        await recorder.close();
        const now = await storage.find("s-before");
        const cast = await text((await storage.read("s-before", now!.bytes))!);
        expect(cast.startsWith(header + old)).toBe(true);
        expect(outputOf(cast).endsWith("after-the-upgrade\r\n")).toBe(true);
        expectWellFormed(cast, 5 * 1024);
      } finally {
        await storage.close();
      }
    } finally {
      await schema.drop();
    }
  });
});

describe("a screen recording in PostgreSQL", () => {
  it("keeps its cap across two recorders: the second reads the tail back and goes on rolling it from a keyframe", async () => {
    const schema = await createTestSchema(server);
    const storage = await PostgresRecordingStorage.open(schema.url);
    const warnings: unknown[] = [];
    const maxBytes = 256 * 1024;
    const store = new RecordingStore({
      storage,
      maxBytes,
      tailBytes: 64 * 1024,
      retentionMs: 86_400_000,
      sessionOf: async () => ({ labId: "desktop-lab", section: "a" }),
      log: { warn: (details: unknown) => void warnings.push(details) },
      tailWriteIntervalMs: 50,
      screen: { intervalMs: 20 },
    });
    try {
      const image = anImage(96, 64);
      for (const round of [0, 1]) {
        const recorder = store.screenRecorderFor({ id: "desk-pg", owner: "alice" });
        for (let step = 0; step < 40; step += 1) {
          recorder.update(image, [scribble(image, round * 100 + step)]);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        recorder.update(image, [paint(image, { x: 0, y: 0, width: 96, height: 64 }, [round, 9, 9])]);
        await recorder.close();
      }
      const found = await store.download("desk-pg", -1, () => true);
      const recording = found ? await text(found.body) : "";
      expect(Buffer.byteLength(recording)).toBeLessThanOrEqual(maxBytes);
      expect(JSON.parse(recording.split("\n")[0]!)).toMatchObject({
        format: "lab-console-screen/1",
        lab_console: { owner: "alice", section: "a", terminal: -1 },
      });
      const events = screenEventsOf(recording);
      const marker = events.findIndex((event) => event[1] === "m");
      expect(marker).toBeGreaterThan(0);
      expect(events[marker + 1]?.[1]).toBe("k");
      expect(events.filter((event) => event[1] === "m")).toHaveLength(1);
      expect(rgbAt(screenAt(recording), 50, 50)).toEqual([1, 9, 9]);
      expect(warnings).toEqual([]);
    } finally {
      await storage.close();
      await schema.drop();
    }
  });
});
