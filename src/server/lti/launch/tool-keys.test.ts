// The tool's keys on a real SQLite store: what an LMS verifies with, across a rotation.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteLtiLaunchStore } from "./store/sqlite-launch-store.ts";
import { createToolKeyRing, defaultKeyRotation } from "./tool-keys.ts";

const day = 24 * 60 * 60 * 1000;
const secret = "a-session-secret-of-at-least-32-characters";

describe("the tool's key ring", () => {
  let dir: string;
  let store: SqliteLtiLaunchStore;
  let clock: number;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "lti-keys-"));
    store = SqliteLtiLaunchStore.open(dir);
    clock = Date.UTC(2031, 0, 6);
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const ring = (options: { secret?: string } = {}) =>
    createToolKeyRing({ store, secret: options.secret ?? secret, now: () => clock });

  async function kidThatSigns(keys: ReturnType<typeof ring>): Promise<string> {
    const jwt = await keys.sign({ iss: "lab-console", aud: "https://lms.example.edu" });
    await jwtVerify(jwt, createLocalJWKSet(await keys.jwks()), { issuer: "lab-console" });
    return decodeProtectedHeader(jwt).kid!;
  }

  it("signs with a key its JWKS publishes, and keeps the private half sealed in the database", async () => {
    const keys = ring();
    const kid = await kidThatSigns(keys);
    const [stored] = await store.keys();
    expect(stored?.kid).toBe(kid);
    expect(JSON.parse(stored!.publicJwk)).not.toHaveProperty("d");
    expect(stored!.sealedPrivateJwk).not.toContain('"d"');
    // Another replica with the same secret signs with the same key.
    expect(await kidThatSigns(ring())).toBe(kid);
  });

  it("publishes the next key a day before signing with it, and drops the old one two periods on", async () => {
    const first = await kidThatSigns(ring());
    clock += defaultKeyRotation.periodMs;
    let keys = ring();
    expect((await keys.jwks()).keys).toHaveLength(2);
    expect(await kidThatSigns(keys)).toBe(first);
    clock += defaultKeyRotation.leadMs;
    keys = ring();
    const second = await kidThatSigns(keys);
    expect(second).not.toBe(first);
    expect((await keys.jwks()).keys.map((key) => key.kid)).toContain(first);
    clock += defaultKeyRotation.periodMs + day;
    keys = ring();
    expect((await keys.jwks()).keys.map((key) => key.kid)).not.toContain(first);
  });

  it("makes a new key rather than publish one it cannot open (another session secret)", async () => {
    const first = await kidThatSigns(ring());
    const keys = ring({ secret: "another-session-secret-of-32-characters!" });
    const second = await kidThatSigns(keys);
    expect(second).not.toBe(first);
    expect((await keys.jwks()).keys.map((key) => key.kid)).toEqual([second]);
  });
});
