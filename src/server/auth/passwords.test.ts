import { describe, expect, it } from "vitest";
import { hashPassword, isPasswordHash, verifyPassword } from "./passwords.ts";

describe("passwords", () => {
  it("verifies the right password and rejects others and malformed hashes", async () => {
    const hash = await hashPassword("demo");
    expect(isPasswordHash(hash)).toBe(true);
    expect(hash).not.toContain("demo");
    expect(await verifyPassword("demo", hash)).toBe(true);
    expect(await verifyPassword("Demo", hash)).toBe(false);
    expect(await verifyPassword("demo", "plain:demo")).toBe(false);
  });

  it("salts every hash", async () => {
    expect(await hashPassword("demo")).not.toBe(await hashPassword("demo"));
  });
});
