import { describe, expect, it } from "vitest";
import { agentToken } from "./agent-token.ts";

describe("agentToken", () => {
  it("is HMAC-SHA256 of the prefixed session id (vector from `openssl dgst -sha256 -hmac`)", () => {
    expect(agentToken("server-secret", "linux-basics-a1b2c3d4")).toBe(
      "6b7e4f3a0b3b0375339de5a2501539446849cf2d6c4a6e298d75602346b492c4",
    );
  });

  it("differs between sessions and between secrets", () => {
    const token = agentToken("server-secret", "lab-aaaaaaaa");
    expect(agentToken("server-secret", "lab-aaaaaaab")).not.toBe(token);
    expect(agentToken("other-secret", "lab-aaaaaaaa")).not.toBe(token);
  });

  it("refuses an empty secret", () => {
    expect(() => agentToken("", "lab-aaaaaaaa")).toThrow(/secret is empty/);
  });
});
