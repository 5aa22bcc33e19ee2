// The sign-in limiter (security review L1): guesses are counted before any password is hashed, so
// concurrent ones cannot slip past the limit, and a burst from one address (a class behind one NAT)
// locks nobody out for long. Real sockets from several loopback addresses; the BFF's clock stands
// still unless a test moves it, instead of waiting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfHeader } from "../../common/api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { rawRequest } from "../testing/raw-http.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";

let emulator: TestEmulator;
let bff: TestBff;
let clock = Date.now();

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  bff = await startTestBff({
    labs: [aLab()],
    emulator,
    now: () => new Date(clock),
    // The bursts below open 300 connections at once from one address.
    serverLimits: { maxConnectionsPerAddress: 1_000 },
  });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

function signIn(username: string, password: string, from = "127.0.0.1", cookie?: string) {
  return rawRequest(bff.url, {
    method: "POST",
    path: "/api/auth/login",
    from,
    headers: { [csrfHeader.name]: csrfHeader.value, ...(cookie ? { cookie } : {}) },
    body: { username, password },
  });
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe("the sign-in limiter", () => {
  it("lets at most ten of 40 concurrent wrong passwords for one name be tried", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        signIn("carol", `guess-${index}`).then((answer) => answer.status),
      ),
    );
    const counts = tally(statuses);
    expect(counts[401] ?? 0).toBeLessThanOrEqual(10);
    expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(40);
  });

  it("after a burst of 300 wrong passwords from one address, the right one works again within 30 s", async () => {
    const from = "127.0.0.2";
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, index) =>
        signIn("alice", `guess-${index}`, from).then((answer) => answer.status),
      ),
    );
    expect(tally(statuses)[401] ?? 0).toBeLessThanOrEqual(10);

    const locked = await signIn("alice", "demo", from);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(locked.headers["retry-after"])).toBeLessThanOrEqual(30);
    // From anywhere else she is not locked out at all.
    expect((await signIn("alice", "demo", "127.0.0.3")).status).toBe(200);

    clock += 30_000;
    expect((await signIn("alice", "demo", from)).status).toBe(200);
  });

  it("a right password gives back what it took: a person signing in often is never limited", async () => {
    for (let attempt = 0; attempt < 25; attempt += 1) {
      expect((await signIn("bob", "demo", "127.0.0.4")).status).toBe(200);
    }
  });

  it("limits guesses at one name from many addresses, each of them under its own limit", async () => {
    const statuses: number[] = [];
    for (let address = 10; address < 50; address += 1) {
      statuses.push((await signIn("tara", `guess-${address}`, `127.0.1.${address}`)).status);
    }
    const counts = tally(statuses);
    expect(counts[401]).toBe(30);
    expect(counts[429]).toBe(10);
    // Ten seconds later the name may be tried once more.
    clock += 10_000;
    expect((await signIn("tara", "demo", "127.0.1.99")).status).toBe(200);
  });

  it("lets a person in from their own browser while others keep every bucket of their name empty", async () => {
    const home = "127.0.2.1";
    const first = await signIn("ivan", "demo", home);
    expect(first.status).toBe(200);
    const deviceCookie = (first.headers["set-cookie"] ?? [])
      .map((cookie) => cookie.split(";")[0]!)
      .find((cookie) => cookie.startsWith("lab_known_device="));
    expect(deviceCookie).toBeDefined();

    // Guessers at four addresses, one of them the person's own (a classroom NAT), until refused.
    for (const from of [home, "127.0.2.10", "127.0.2.11", "127.0.2.12"]) {
      for (let guess = 0; guess < 15; guess += 1) await signIn("ivan", `guess-${guess}`, from);
    }
    expect((await signIn("ivan", "demo", "127.0.2.20")).status).toBe(429);
    expect((await signIn("ivan", "demo", home)).status).toBe(429);
    expect((await signIn("ivan", "demo", home, deviceCookie)).status).toBe(200);
  });
});
