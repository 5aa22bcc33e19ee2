import { describe, expect, it } from "vitest";
import { agentKey } from "./key.ts";

describe("agentKey", () => {
  it("is HMAC-SHA256 of the prefixed session id (vector from `openssl dgst -sha256 -hmac`)", () => {
    expect(agentKey("server-secret", "linux-basics-a1b2c3d4")).toBe(
      "6b7e4f3a0b3b0375339de5a2501539446849cf2d6c4a6e298d75602346b492c4",
    );
  });

  it("differs between sessions and between secrets", () => {
    const key = agentKey("server-secret", "lab-aaaaaaaa");
    expect(agentKey("server-secret", "lab-aaaaaaab")).not.toBe(key);
    expect(agentKey("other-secret", "lab-aaaaaaaa")).not.toBe(key);
  });

  it("refuses an empty secret", () => {
    expect(() => agentKey("", "lab-aaaaaaaa")).toThrow(/secret is empty/);
  });
});
