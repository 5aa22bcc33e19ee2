import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentFile, loadAgentFile } from "./agent-file.ts";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "agent-file-"));
});

afterEach(() => rm(root, { recursive: true, force: true }));

/** Each file of a zip and its bytes (hex), as Python's zipfile reads them. */
function unzip(file: string): Record<string, string> {
  const script =
    "import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(json.dumps({n: z.read(n).hex() for n in z.namelist()}))";
  return JSON.parse(execFileSync("python3", ["-c", script, file], { encoding: "utf8" })) as Record<
    string,
    string
  >;
}

describe("the agent file delivered to VMs", () => {
  it("is the modules of src/agent/lab_agent/, byte for byte, in a zip that python3 -I runs", async () => {
    expect(agentFile).toBe(path.resolve(import.meta.dirname, "../../agent/lab_agent"));
    const pyz = path.join(root, "lab_agent.pyz");
    await writeFile(pyz, await loadAgentFile());
    const modules = (await readdir(agentFile)).filter((name) => name.endsWith(".py"));
    const expected = Object.fromEntries(
      await Promise.all(
        modules.map(async (name) => [name, (await readFile(path.join(agentFile, name))).toString("hex")]),
      ),
    );
    expect(unzip(pyz)).toEqual(expected);
    expect(modules).toContain("__main__.py");
    expect(execFileSync("python3", ["-I", pyz, "--help"], { encoding: "utf8" })).toContain("--key-file");
  });

  it("leaves out what a local run left behind, and is the same bytes at every start", async () => {
    const folder = path.join(root, "lab_agent");
    await mkdir(path.join(folder, "__pycache__"), { recursive: true });
    await writeFile(path.join(folder, "__main__.py"), "print('hello')\n");
    await writeFile(path.join(folder, "__pycache__", "__main__.cpython-311.pyc"), "stale");
    const first = await loadAgentFile(folder);
    expect(first).toEqual(await loadAgentFile(folder));
    await writeFile(path.join(root, "hello.pyz"), first);
    expect(Object.keys(unzip(path.join(root, "hello.pyz")))).toEqual(["__main__.py"]);
  });

  it("fails the start with the path when it is missing", async () => {
    const missing = path.join(root, "lab_agent");
    await expect(loadAgentFile(missing)).rejects.toThrow(
      /^The grading agent \S*lab_agent cannot be read \(ENOENT.*\); every VM needs it\.$/,
    );
  });
});
