// SignIns as replicas use them: several instances over one real sign-out store (a SQLite file
// each opens on its own connection, as two processes would), polling it every few milliseconds.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import { patient, eventually } from "../../common/testing/patience.ts";
import { endedSignInsDatabaseName } from "./ended-sign-ins/ended-sign-ins-database.ts";
import { SqliteEndedSignInRepository } from "./ended-sign-ins/sqlite-repository.ts";
import { SignIns, type SignIn, type SignInsOptions } from "./sign-ins.ts";

const alice: Me = { username: "alice", role: "student", sections: [] };
const hour = 60 * 60 * 1000;

let dir: string;
const toClose: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "sign-ins-"));
});
afterEach(async () => {
  // Newest first: the instances before the stores under them.
  for (const each of toClose.splice(0).reverse()) await each.close();
  await rm(dir, { recursive: true, force: true });
});

function openStore(): SqliteEndedSignInRepository {
  const store = SqliteEndedSignInRepository.open(dir, { busyTimeoutMs: 20 });
  toClose.push(store);
  return store;
}

/** A replica: its own connection to the shared store, polling every 20 ms. */
async function replica(options: Partial<SignInsOptions> = {}) {
  const messages: string[] = [];
  const log = { info: (line: string) => messages.push(line), warn: (line: string) => messages.push(line) };
  const sessions = await SignIns.open({ store: openStore(), pollIntervalMs: 20, log, ...options });
  toClose.push(sessions);
  const ended: SignIn[] = [];
  sessions.onEnded((session) => ended.push(session));
  return { sessions, ended, messages };
}

const refused = (sessions: SignIns, session: SignIn) => async () => sessions.accept(session) === undefined;

describe("SignIns across replicas", () => {
  it("accepts a sign-in made by another replica, or before a restart, with no lookup", async () => {
    const a = await replica();
    const signIn = a.sessions.create(alice, { providerSignOutUrl: "https://login.example.edu/logout" });
    expect(signIn.id).toMatch(/^[\w-]{43}$/);
    expect(signIn.expiresAt - Date.now()).toBeGreaterThan(11 * hour);
    await a.sessions.close();

    const b = await replica();
    expect(b.sessions.accept(signIn)).toEqual(signIn);
  });

  it("refuses a sign-out at once where it happened, and after a poll on every other replica", async () => {
    const a = await replica();
    const b = await replica();
    const signIn = a.sessions.create(alice);
    const untouched = a.sessions.create({ username: "bob", role: "student", sections: [] });
    expect(b.sessions.accept(signIn)).toBeDefined();
    expect(a.sessions.accept(signIn)).toBeDefined();

    await a.sessions.end(signIn);
    expect(a.sessions.accept(signIn)).toBeUndefined();
    expect(a.ended).toEqual([signIn]);
    await eventually(refused(b.sessions, signIn), Boolean, { what: "the other replica to refuse it" });
    // B had accepted it (it could hold a console for it): its listeners close what it holds.
    expect(b.ended).toEqual([signIn]);
    expect(b.sessions.accept(untouched)).toBeDefined();

    // Ended twice, heard once; and a replica starting now knows before its first request.
    await a.sessions.end(signIn);
    expect(a.ended).toHaveLength(1);
    const c = await replica();
    expect(c.sessions.accept(signIn)).toBeUndefined();
    expect(c.ended).toEqual([]);
  });

  it("refuses an expired sign-in, tells listeners where it was accepted, and purges its sign-out", async () => {
    let now = Date.UTC(2030, 0, 1, 8);
    const a = await replica({ now: () => now });
    const b = await replica({ now: () => now });
    const signedOut = a.sessions.create(alice);
    const expiring = a.sessions.create({ username: "bob", role: "student", sections: [] });
    expect(b.sessions.accept(expiring)).toBeDefined();
    await a.sessions.end(signedOut);
    const store = openStore();
    expect((await store.endedSince(0)).endedSignIns.map((each) => each.id)).toEqual([signedOut.id]);

    now = expiring.expiresAt;
    expect(b.sessions.accept(expiring)).toBeUndefined();
    await eventually(
      async () => b.ended,
      (ended) => ended.length === 1,
      { what: "the expiry heard" },
    );
    expect(b.ended).toEqual([expiring]);
    // Expired, the sign-out is useless: the store forgets it, and the replicas refuse it all the same.
    await eventually(
      async () => (await store.endedSince(0)).endedSignIns,
      (rows) => rows.length === 0,
      { what: "the expired sign-out purged" },
    );
    expect(a.sessions.accept(signedOut)).toBeUndefined();
  });
});

describe("SignIns when the store is in trouble", () => {
  it("ends a sign-in here at once while the store is locked, and shares it once the store answers", async () => {
    const a = await replica();
    const b = await replica();
    const signIn = a.sessions.create(alice);
    const locker = new Database(path.join(dir, endedSignInsDatabaseName));
    try {
      locker.exec("BEGIN IMMEDIATE");
      const started = performance.now();
      await a.sessions.end(signIn);
      expect(performance.now() - started).toBeLessThan(patient(1500));
      expect(a.sessions.accept(signIn)).toBeUndefined();
      expect(a.messages.join("\n")).toMatch(/A sign-out could not be stored \(.*locked by another program/);
      // Not stored: the other replica cannot know yet.
      expect(b.sessions.accept(signIn)).toBeDefined();
      locker.exec("COMMIT");
    } finally {
      locker.close();
    }
    await eventually(refused(b.sessions, signIn), Boolean, { what: "the retried sign-out to reach B" });
    await eventually(
      async () => a.messages.at(-1),
      (line) => line?.startsWith("The sign-out store answers again") ?? false,
      { what: "the recovery logged" },
    );
  });
});

describe("cutting a person's sign-ins off", () => {
  it("ends every earlier sign-in of that person on every replica, and none made later or of others", async () => {
    let now = Date.UTC(2030, 0, 1, 8);
    const clock = { now: () => now };
    const a = await replica(clock);
    const b = await replica(clock);
    const tara: Me = { username: "tara", role: "ta", sections: [] };
    const onA = a.sessions.create(tara);
    now += 1000;
    const onB = b.sessions.create(tara);
    const bob = b.sessions.create({ username: "bob", role: "student", sections: [] });
    for (const signIn of [onA, onB, bob]) expect(b.sessions.accept(signIn)).toBeDefined();
    expect(a.sessions.accept(onA)).toBeDefined();

    now += 1000;
    const cutOff = await a.sessions.cutOff("tara");
    expect(cutOff).toEqual({ username: "tara", issuedUpTo: now, expiresAt: now + 12 * hour });
    expect(a.sessions.accept(onA)).toBeUndefined();
    expect(a.ended).toEqual([onA]);
    await eventually(refused(b.sessions, onB), Boolean, { what: "the other replica to apply the cut-off" });
    expect(b.sessions.accept(onA)).toBeUndefined();
    expect(b.sessions.accept(bob)).toBeDefined();
    expect(b.ended).toEqual([onA, onB]);

    now += 1;
    const again = a.sessions.create(tara);
    expect(b.sessions.accept(again)).toBeDefined();
    // A replica starting now knows before its first request; once every cookie it refuses has
    // expired, it is forgotten and purged.
    const c = await replica(clock);
    expect(c.sessions.accept(onB)).toBeUndefined();
    now = cutOff.expiresAt;
    expect(await openStore().cutOffs(now)).toEqual([]);
  });
});
