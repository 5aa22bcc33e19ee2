import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreateAgentKeySecret, loadOrCreateSessionSecret } from "./secret.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "secrets-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("agent key secret", () => {
  it("is generated once into its own private file, apart from the cookie secret", async () => {
    const agent = await loadOrCreateAgentKeySecret(dir, undefined);
    expect(agent.length).toBeGreaterThanOrEqual(32);
    expect((await stat(path.join(dir, "agent-token-secret"))).mode & 0o777).toBe(0o600);
    expect((await readFile(path.join(dir, "agent-token-secret"), "utf8")).trim()).toBe(agent);
    // A second replica on the same data folder (or a restart) derives the same keys.
    expect(await loadOrCreateAgentKeySecret(dir, undefined)).toBe(agent);
    expect(await loadOrCreateSessionSecret(dir, undefined)).not.toBe(agent);
  });

  it("comes from AGENT_TOKEN_SECRET when set, and then nothing is written", async () => {
    expect(await loadOrCreateAgentKeySecret(dir, "s".repeat(40))).toBe("s".repeat(40));
    await expect(stat(path.join(dir, "agent-token-secret"))).rejects.toThrow(/ENOENT/);
  });
});
