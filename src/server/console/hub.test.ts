// The console hub letting a console go only once its recording holds the console's last output: a
// real VM console stand-in (a websocket sending binary frames, as KubeVirt's does), the real
// recording store, on files and on PostgreSQL.
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import type { FastifyBaseLogger } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestSchema,
  startTestPostgres,
  type TestPostgres,
} from "../db/postgres/testing/test-postgres.ts";
import { FileRecordingStorage } from "../recordings/file-recording-storage.ts";
import { PostgresRecordingStorage } from "../recordings/postgres-recording-storage.ts";
import type { RecordingStorage } from "../recordings/recording-storage.ts";
import { RecordingStore } from "../recordings/recording-store.ts";
import { eventually } from "../../common/testing/patience.ts";
import { ConsoleHub } from "./hub.ts";
import { aRunningSession } from "../sessions/testing/fixtures.ts";

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(() => postgres?.close());

/** A storage and how to remove what it stored. */
type StorageUnderTest = { storage: RecordingStorage; remove(): Promise<void> };

const storages: [string, () => Promise<StorageUnderTest>][] = [
  [
    "files",
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "hub-recordings-"));
      return {
        storage: new FileRecordingStorage(dir),
        remove: () => rm(dir, { recursive: true, force: true }),
      };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const schema = await createTestSchema(postgres);
      const storage = await PostgresRecordingStorage.open(schema.url);
      return {
        storage,
        remove: async () => {
          await storage.close();
          await schema.drop();
        },
      };
    },
  ],
];

/** A logger that keeps every warning and error. */
function keepingLog(problems: unknown[]): FastifyBaseLogger {
  const keep = (...args: unknown[]) => void problems.push(args);
  const log = {
    level: "info",
    fatal: keep,
    error: keep,
    warn: keep,
    info: () => undefined,
    debug: () => undefined,
    trace: () => undefined,
    silent: () => undefined,
    child: () => log,
  };
  return log as unknown as FastifyBaseLogger;
}

describe.each(storages)("a console closing, recorded on %s", (_name, create) => {
  it("is let go only once its recording holds the last line, and the hub's close waits for it", async () => {
    const { storage, remove } = await create();
    // The VM's console.
    const vm = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(vm, "listening");
    const vmUrl = `ws://127.0.0.1:${(vm.address() as AddressInfo).port}`;
    // Until it opens, the recording cannot start: the line waits in the recorder, as behind a slow disk.
    let letTheRecordingOpen!: () => void;
    const recordingMayOpen = new Promise<void>((resolve) => (letTheRecordingOpen = resolve));
    const problems: unknown[] = [];
    const released: string[] = [];
    const hub = new ConsoleHub({
      setGuestSize: async () => ({ ok: true }),
      openTerminal: () => Promise.reject(new Error("this test opens no terminals")),
      connectScreen: () => Promise.reject(new Error("this test opens no screens")),
      connect: async () => {
        const socket = new WebSocket(vmUrl);
        await once(socket, "open");
        return socket;
      },
      findSession: async (id) => aRunningSession(id, { labId: "lab-one" }),
      log: keepingLog(problems),
      recordings: new RecordingStore({
        storage,
        maxBytes: 100_000,
        retentionMs: 86_400_000,
        sessionOf: async () => {
          await recordingMayOpen;
          return { labId: "lab-one", section: null };
        },
        log: keepingLog(problems),
      }),
      onClosed: (id) => void released.push(id),
    });
    try {
      hub.keepOpen({ id: "s-closing", owner: "alice" });
      await eventually(
        async () => hub.stats().connectedUpstreams,
        (connected) => connected === 1,
        { what: "the console connected" },
      );
      for (const vmSide of vm.clients) vmSide.send(Buffer.from("the last line\r\n"), { binary: true });
      await eventually(
        async () => hub.screenOf("s-closing")?.screenText().rows.join("\n") ?? "",
        (screen) => screen.includes("the last line"),
        { what: "the line on the console's screen" },
      );

      const closing = hub.close();
      // A round trip to the storage: the console is closed, its lease (onClosed) still held.
      expect(await storage.find("s-closing")).toBeUndefined();
      expect(hub.has("s-closing")).toBe(false);
      expect(released).toEqual([]);

      letTheRecordingOpen();
      await closing;
      expect(released).toEqual(["s-closing"]);
      const found = await storage.find("s-closing");
      expect(found).toBeDefined();
      const cast = await text((await storage.read("s-closing", found!.bytes))!);
      expect(cast).toContain("the last line");
      expect(problems).toEqual([]);
    } finally {
      letTheRecordingOpen();
      await hub.close();
      vm.close();
      await remove();
    }
  });
});
