// What every LtiLaunchStore must do, as a suite any backend runs with its own harness.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../../../db/testing/repository-harness.ts";
import type { LtiLaunchStore, StoredPlatform } from "../repository.ts";

const now = Date.UTC(2031, 0, 6, 9);

export function aRegisteredPlatform(overrides: Partial<StoredPlatform> = {}): StoredPlatform {
  return {
    id: "moodle-1a2b3c4d",
    name: "moodle at lms.example.edu",
    issuer: "https://lms.example.edu",
    clientId: "Xq1",
    authLoginUrl: "https://lms.example.edu/mod/lti/auth.php",
    tokenUrl: "https://lms.example.edu/mod/lti/token.php",
    jwksUrl: "https://lms.example.edu/mod/lti/certs.php",
    deploymentIds: ["7"],
    status: "pending",
    registeredAt: now,
    ...overrides,
  };
}

export function describeLtiLaunchStoreContract(
  backend: string,
  createHarness: () => Promise<RepositoryHarness<LtiLaunchStore>>,
): void {
  describe(`the ${backend} LTI launch store`, () => {
    let harness: RepositoryHarness<LtiLaunchStore>;
    let store: LtiLaunchStore;
    beforeEach(async () => {
      harness = await createHarness();
      store = harness.repository;
    });
    afterEach(() => harness.cleanup());

    it("keeps keys in the order they were made, across a restart, until removed", async () => {
      await store.addKey({ kid: "k2", publicJwk: "{}", sealedPrivateJwk: "b", createdAt: now + 1 });
      await store.addKey({ kid: "k1", publicJwk: '{"n":"x"}', sealedPrivateJwk: "a", createdAt: now });
      store = await harness.reopen();
      expect((await store.keys()).map((key) => key.kid)).toEqual(["k1", "k2"]);
      expect((await store.keys())[0]).toEqual({
        kid: "k1",
        publicJwk: '{"n":"x"}',
        sealedPrivateJwk: "a",
        createdAt: now,
      });
      await store.removeKey("k1");
      expect((await store.keys()).map((key) => key.kid)).toEqual(["k2"]);
    });

    it("keeps a registered platform pending until it is approved, and refuses the same client twice", async () => {
      await store.addPlatform(aRegisteredPlatform());
      await expect(store.addPlatform(aRegisteredPlatform({ id: "other" }))).rejects.toThrow();
      store = await harness.reopen();
      expect(await store.platforms()).toEqual([aRegisteredPlatform()]);
      expect(await store.approvePlatform("moodle-1a2b3c4d")).toEqual(
        aRegisteredPlatform({ status: "active" }),
      );
      expect(await store.approvePlatform("nobody")).toBeUndefined();
      expect((await store.platforms())[0]?.status).toBe("active");
    });

    it("gives a one-time value once, to whoever takes it first, and never after it expires", async () => {
      await store.keep("login", "s1", '{"nonce":"n"}', now + 1000);
      expect(await store.peek("login", "s1", now)).toBe('{"nonce":"n"}');
      expect(await store.peek("ticket", "s1", now)).toBeUndefined();
      const takes = await Promise.all([store.take("login", "s1", now), store.take("login", "s1", now)]);
      expect(takes.filter((value) => value !== undefined)).toEqual(['{"nonce":"n"}']);
      expect(await store.peek("login", "s1", now)).toBeUndefined();

      await store.keep("ticket", "t1", "x", now + 1000);
      expect(await store.peek("ticket", "t1", now + 1000)).toBeUndefined();
      expect(await store.take("ticket", "t1", now + 1000)).toBeUndefined();
    });

    it("accepts a nonce once per issuer, and forgets it when it expires", async () => {
      expect(await store.useNonce("https://a", "n1", now + 1000)).toBe(true);
      expect(await store.useNonce("https://a", "n1", now + 1000)).toBe(false);
      expect(await store.useNonce("https://b", "n1", now + 1000)).toBe(true);
      await store.keep("login", "old", "x", now);
      await store.purge(now + 1000);
      expect(await store.useNonce("https://a", "n1", now + 5000)).toBe(true);
      expect(await store.take("login", "old", 0)).toBeUndefined();
    });
  });
}
