// The behaviour every AuditRepository must show, as a suite any implementation can run:
// describeAuditRepositoryContract("PostgreSQL", createHarness) is all a new backend needs.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditRepository, NewAuditEntry } from "../repository.ts";

export interface AuditRepositoryHarness {
  repository: AuditRepository;
  /** The same store through a new connection, as the console sees it after a restart. */
  reopen(): Promise<AuditRepository>;
  /** Closes whatever is open and removes the store. */
  cleanup(): Promise<void>;
}

export function anAuditEntry(overrides: Partial<NewAuditEntry> = {}): NewAuditEntry {
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

export function describeAuditRepositoryContract(
  name: string,
  create: () => Promise<AuditRepositoryHarness>,
): void {
  describe(`AuditRepository contract: ${name}`, () => {
    let harness: AuditRepositoryHarness;
    let repository: AuditRepository;

    beforeEach(async () => {
      harness = await create();
      repository = harness.repository;
    });
    afterEach(() => harness.cleanup());

    it("returns each entry as stored, with an id of its own", async () => {
      const first = await repository.append(
        anAuditEntry({ details: { minutes: 15, reason: "asked", ok: true } }),
      );
      const second = await repository.append(
        anAuditEntry({
          actor: "system",
          actorRole: null,
          sessionId: null,
          labId: null,
          owner: null,
          ip: null,
          userAgent: null,
        }),
      );
      expect(second.id).toBeGreaterThan(first.id);
      expect(await repository.list({}, { limit: 10 })).toEqual([second, first]);
      expect(first.details).toEqual({ minutes: 15, reason: "asked", ok: true });
    });

    it("keeps entries across reopening and filters them by person, action, session, lab and time", async () => {
      await repository.append(anAuditEntry());
      await repository.append(
        anAuditEntry({ at: "2030-01-01T09:10:00.000Z", actor: "tara", actorRole: "ta", action: "end" }),
      );
      await repository.append(
        anAuditEntry({
          at: "2030-01-01T10:00:00.000Z",
          actor: "bob",
          owner: "bob",
          sessionId: "git-workflow-bbbbbbbb",
          labId: "git-workflow",
        }),
      );

      const reopened = await harness.reopen();
      const ids = async (filter: Parameters<AuditRepository["list"]>[0]) =>
        (await reopened.list(filter, { limit: 10 })).map((entry) => `${entry.actor} ${entry.action}`);
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
    });

    it("pages newest first by id, each page below the last one's ids", async () => {
      for (let index = 0; index < 5; index += 1) {
        await repository.append(
          anAuditEntry({ action: index % 2 === 0 ? "launch" : "end", details: { index } }),
        );
      }
      const indexes = async (page: { before?: number; limit: number }, filter = {}) =>
        (await repository.list(filter, page)).map((entry) => entry.details.index);
      const all = await repository.list({}, { limit: 10 });
      expect(all.map((entry) => entry.details.index)).toEqual([4, 3, 2, 1, 0]);
      expect(await indexes({ limit: 2 })).toEqual([4, 3]);
      expect(await indexes({ limit: 2, before: all[1]?.id })).toEqual([2, 1]);
      expect(await indexes({ limit: 2, before: all[3]?.id })).toEqual([0]);
      expect(await indexes({ limit: 2, before: all[1]?.id }, { action: "launch" })).toEqual([2, 0]);
    });
  });
}
