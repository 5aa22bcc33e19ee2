import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentFile, loadAgentFile } from "./agent-file.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "agent-file-"));
});

afterEach(() => rm(root, { recursive: true, force: true }));

describe("the agent file delivered to VMs", () => {
  it("is src/agent/lab_agent.py byte for byte, with no build", async () => {
    expect(agentFile).toBe(path.resolve(import.meta.dirname, "../../agent/lab_agent.py"));
    expect(await loadAgentFile()).toEqual(await readFile(path.resolve("src/agent/lab_agent.py")));
  });

  it("fails the start with the path when it is missing", async () => {
    const missing = path.join(root, "lab_agent.py");
    await expect(loadAgentFile(missing)).rejects.toThrow(
      /^The grading agent \S*lab_agent\.py cannot be read \(ENOENT.*\); every VM needs it\.$/,
    );
  });
});
