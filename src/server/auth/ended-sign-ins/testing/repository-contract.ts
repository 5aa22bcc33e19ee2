// The behaviour every EndedSignInRepository must show, as a suite any implementation can run:
// describeEndedSignInRepositoryContract("PostgreSQL", createHarness) is all a new backend needs.
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../../db/testing/repository-harness.ts";
import type { EndedSignIn, EndedSignInRepository, SignInCutOff } from "../repository.ts";

const hour = 60 * 60 * 1000;
// Whole milliseconds in the future, as SignIns hands them out.
const inTwelveHours = Date.UTC(2030, 0, 1, 21, 0, 0, 123);

export function anEndedSignIn(overrides: Partial<EndedSignIn> = {}): EndedSignIn {
  return { id: randomBytes(32).toString("base64url"), expiresAt: inTwelveHours, ...overrides };
}

export function aCutOff(overrides: Partial<SignInCutOff> = {}): SignInCutOff {
  return { username: "tara", issuedUpTo: inTwelveHours - 12 * hour, expiresAt: inTwelveHours, ...overrides };
}

/** Reads on from where it stopped, as a replica's poll loop does, and keeps only ids it had not seen. */
function follower(repository: () => EndedSignInRepository, position = 0) {
  const known = new Set<string>();
  return {
    get position() {
      return position;
    },
    async newlyEnded(): Promise<EndedSignIn[]> {
      const page = await repository().endedSince(position);
      position = page.position;
      const fresh = page.endedSignIns.filter((each) => !known.has(each.id));
      for (const each of fresh) known.add(each.id);
      return fresh;
    },
  };
}

export function describeEndedSignInRepositoryContract(
  name: string,
  create: () => Promise<RepositoryHarness<EndedSignInRepository>>,
): void {
  describe(`EndedSignInRepository contract: ${name}`, () => {
    let harness: RepositoryHarness<EndedSignInRepository>;
    let repository: EndedSignInRepository;

    beforeEach(async () => {
      harness = await create();
      repository = harness.repository;
    });
    afterEach(() => harness.cleanup());

    it("returns each sign-out as recorded, oldest first, once however often it is recorded", async () => {
      const first = anEndedSignIn();
      const second = anEndedSignIn({ expiresAt: inTwelveHours + hour });
      await repository.record(first);
      await repository.record(second);
      await repository.record(first);
      const page = await repository.endedSince(0);
      expect(page.endedSignIns).toEqual([first, second]);
      expect(page.position).toBeGreaterThan(0);
    });

    it("continues from a position: a later sign-out comes in the next answer", async () => {
      const reader = follower(() => repository);
      expect(await reader.newlyEnded()).toEqual([]);
      const first = anEndedSignIn();
      await repository.record(first);
      expect(await reader.newlyEnded()).toEqual([first]);
      const afterFirst = reader.position;
      expect(await reader.newlyEnded()).toEqual([]);
      const second = anEndedSignIn();
      await repository.record(second);
      expect(await reader.newlyEnded()).toEqual([second]);
      expect(reader.position).toBeGreaterThan(afterFirst);
    });

    it("keeps sign-outs across reopening, and a position from before still counts", async () => {
      const before = anEndedSignIn();
      await repository.record(before);
      let current = repository;
      const reader = follower(() => current);
      expect(await reader.newlyEnded()).toEqual([before]);

      current = await harness.reopen();
      const after = anEndedSignIn();
      await current.record(after);
      expect(await reader.newlyEnded()).toEqual([after]);
      expect((await current.endedSince(0)).endedSignIns).toEqual([before, after]);
    });

    it("purges only the expired, and never reuses a purged position", async () => {
      const soon = anEndedSignIn({ expiresAt: inTwelveHours - hour });
      const later = anEndedSignIn();
      await repository.record(later);
      await repository.record(soon);
      const reader = follower(() => repository);
      expect(await reader.newlyEnded()).toEqual([later, soon]);

      // The newest row goes: a row recorded next must still come after the reader's position.
      expect(await repository.purgeExpired(inTwelveHours - hour - 1)).toBe(0);
      expect(await repository.purgeExpired(inTwelveHours - hour)).toBe(1);
      expect((await repository.endedSince(0)).endedSignIns).toEqual([later]);
      const next = anEndedSignIn();
      await repository.record(next);
      expect(await reader.newlyEnded()).toEqual([next]);
    });

    it("keeps one cut-off per person, never moved back, and only while it has not expired", async () => {
      const tara = aCutOff();
      const later = aCutOff({ issuedUpTo: tara.issuedUpTo + hour, expiresAt: tara.expiresAt + hour });
      const bob = aCutOff({ username: "bob", expiresAt: inTwelveHours - hour });
      await repository.recordCutOff(later);
      await repository.recordCutOff(tara);
      await repository.recordCutOff(bob);
      const now = inTwelveHours - 2 * hour;
      expect(await repository.cutOffs(now)).toEqual([bob, later]);
      expect(await repository.cutOffs(inTwelveHours - hour)).toEqual([later]);

      const reopened = await harness.reopen();
      expect(await reopened.cutOffs(now)).toEqual([bob, later]);
      expect(await reopened.purgeExpired(inTwelveHours - hour)).toBe(1);
      expect(await reopened.cutOffs(now)).toEqual([later]);
    });
  });
}
