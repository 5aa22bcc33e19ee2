import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentBundlePath, loadAgentBundle } from "./agent-bundle.ts";

let root: string;
let builds: number;
const quiet = { info() {}, warn() {} };
const build = async (outfile: string) => {
  builds += 1;
  await mkdir(path.dirname(outfile), { recursive: true });
  await writeFile(outfile, `built ${builds}`);
};

async function setTime(file: string, seconds: number): Promise<void> {
  await utimes(path.join(root, file), seconds, seconds);
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "agent-bundle-"));
  builds = 0;
  await mkdir(path.join(root, "src/agent"), { recursive: true });
  await mkdir(path.join(root, "src/common"), { recursive: true });
  await writeFile(path.join(root, "src/agent/main.ts"), "");
  await writeFile(path.join(root, "src/common/agent-protocol.ts"), "");
  await setTime("src/agent/main.ts", 1000);
  await setTime("src/common/agent-protocol.ts", 1000);
});

afterEach(() => rm(root, { recursive: true, force: true }));

describe("the agent bundle delivered to VMs", () => {
  it("is built when missing, then reused while it is newer than the agent's sources", async () => {
    expect((await loadAgentBundle(root, { build, log: quiet })).toString()).toBe("built 1");
    await setTime(agentBundlePath, 2000);
    expect((await loadAgentBundle(root, { build, log: quiet })).toString()).toBe("built 1");
    expect(builds).toBe(1);
  });

  it("is built again when a source of the agent (or the protocol it shares) changed after it", async () => {
    await loadAgentBundle(root, { build, log: quiet });
    await setTime(agentBundlePath, 2000);
    await setTime("src/common/agent-protocol.ts", 3000);
    expect((await loadAgentBundle(root, { build, log: quiet })).toString()).toBe("built 2");
    // Test files do not count: they never end up in the bundle.
    await setTime(agentBundlePath, 4000);
    await writeFile(path.join(root, "src/agent/server.test.ts"), "");
    await loadAgentBundle(root, { build, log: quiet });
    expect(builds).toBe(2);
  });

  it("keeps an outdated file when rebuilding fails, and says so; fails when there is none", async () => {
    const warnings: string[] = [];
    const failing = () => Promise.reject(new Error("esbuild is not installed"));
    await expect(loadAgentBundle(root, { build: failing, log: quiet })).rejects.toThrow(
      "The grading agent could not be built (esbuild is not installed); run npm run build:agent.",
    );
    await mkdir(path.join(root, "dist/agent"), { recursive: true });
    await writeFile(path.join(root, agentBundlePath), "shipped");
    await setTime(agentBundlePath, 500);
    const bundle = await loadAgentBundle(root, {
      build: failing,
      log: { info() {}, warn: (message) => warnings.push(message) },
    });
    expect(bundle.toString()).toBe("shipped");
    expect(warnings).toEqual([expect.stringContaining("could not be rebuilt (esbuild is not installed)")]);
    expect(await readFile(path.join(root, agentBundlePath), "utf8")).toBe("shipped");
  });
});
