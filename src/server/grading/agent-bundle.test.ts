import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentFilePath, loadAgentFile } from "./agent-bundle.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "agent-file-"));
});

afterEach(() => rm(root, { recursive: true, force: true }));

describe("the agent file delivered to VMs", () => {
  it("is src/agent/lab_agent.py byte for byte, with no build", async () => {
    await mkdir(path.join(root, "src/agent"), { recursive: true });
    await writeFile(path.join(root, agentFilePath), "#!/usr/bin/python3\nprint('agent')\n");
    expect((await loadAgentFile(root)).toString()).toBe("#!/usr/bin/python3\nprint('agent')\n");
  });

  it("fails the start with the path when it is missing", async () => {
    await expect(loadAgentFile(root)).rejects.toThrow(
      /^The grading agent src\/agent\/lab_agent\.py cannot be read \(ENOENT.*\); every VM needs it\.$/,
    );
  });
});
