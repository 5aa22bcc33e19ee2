import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDemoAuthenticator } from "./authenticator.ts";
import { loadOrCreateSessionSecret } from "./secret.ts";
import { loadUsers, UsersFileError } from "./users-file.ts";

// Well-formed; no password is checked here.
const hash = "scrypt$16384$8$1$c2FsdA==$a2V5";
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "lab-users-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("users file", () => {
  it("creates the demo users once, readable only by the owner, with hashes instead of passwords", async () => {
    const file = path.join(dir, "nested", "users.json");
    const users = await loadUsers(file);
    expect(users.map(({ username, role, sections }) => `${username}:${role}:${sections.join(",")}`)).toEqual([
      "alice:student:a",
      "bob:student:a",
      "carol:student:b",
      // A TA of no section is a TA of the whole course.
      "tara:ta:",
      "tom:ta:b",
      "ivan:instructor:",
    ]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).not.toMatch(/"demo"/);
    expect(await loadUsers(file)).toEqual(users);

    const auth = await createDemoAuthenticator(users);
    expect(await auth.login("tara", "demo")).toEqual({ username: "tara", role: "ta", sections: [] });
    expect(await auth.login("tom", "demo")).toEqual({ username: "tom", role: "ta", sections: ["b"] });
    expect(await auth.login("tara", "wrong")).toBeNull();
  });

  it("names every problem in a hand-edited file", async () => {
    const file = path.join(dir, "users.json");
    await writeFile(
      file,
      JSON.stringify({
        users: [
          { username: "Alice Smith", role: "student", passwordHash: "scrypt$1$1$1$c2FsdA==$a2V5" },
          { username: "bob", role: "admin", passwordHash: "demo" },
          { username: "carol", role: "student", sections: ["A"], passwordHash: hash },
          { username: "dan", role: "ta", sections: ["a", "a"], passwordHash: hash },
        ],
      }),
    );
    const error = await loadUsers(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsersFileError);
    expect((error as Error).message).toMatch(/users\.0\.username/);
    expect((error as Error).message).toMatch(/users\.1\.role/);
    expect((error as Error).message).toMatch(/users\.1\.passwordHash/);
    expect((error as Error).message).toMatch(/users\.2\.sections\.0: must be a section name/);
    expect((error as Error).message).toMatch(/users\.3\.sections: lists a section twice/);
  });

  it("reads a user without sections as in none, and keeps the order of a person's sections", async () => {
    const file = path.join(dir, "users.json");
    await writeFile(
      file,
      JSON.stringify({
        users: [
          { username: "ana", role: "student", passwordHash: hash },
          { username: "ted", role: "ta", sections: ["lab-2", "lab-1"], passwordHash: hash },
        ],
      }),
    );
    expect((await loadUsers(file)).map(({ username, sections }) => ({ username, sections }))).toEqual([
      { username: "ana", sections: [] },
      { username: "ted", sections: ["lab-2", "lab-1"] },
    ]);
  });
});

describe("session secret", () => {
  it("is generated once, kept private, and reused; SESSION_SECRET wins", async () => {
    const first = await loadOrCreateSessionSecret(dir, undefined);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect((await stat(path.join(dir, "session-secret"))).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSessionSecret(dir, undefined)).toBe(first);
    expect(await loadOrCreateSessionSecret(dir, "x".repeat(40))).toBe("x".repeat(40));
  });
});
