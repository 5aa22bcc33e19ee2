// What an agent under test needs: a key file and a home the checks' user may write to.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export interface AgentFixture {
  dir: string;
  home: string;
  key: string;
  keyFile: string;
  /** As root the agent switches to "nobody", as anyone else it runs checks as itself. */
  user: string | null;
  expectedUser: string;
  remove(): Promise<void>;
}

export async function createAgentFixture(): Promise<AgentFixture> {
  const dir = await mkdtemp(join(tmpdir(), "lab-agent-"));
  const home = join(dir, "home");
  await mkdir(home);
  // "nobody" must reach and write the home that root created.
  await chmod(dir, 0o755);
  await chmod(home, 0o777);
  const key = randomBytes(32).toString("hex");
  const keyFile = join(dir, "key");
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  const asRoot = process.getuid?.() === 0;
  return {
    dir,
    home,
    key,
    keyFile,
    user: asRoot ? "nobody" : null,
    expectedUser: asRoot ? "nobody" : userInfo().username,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A zombie (state Z) counts as gone: it has stopped running and only waits to be reaped. */
export function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Reads a pid that a check wrote into a file, once the whole line is there. */
export function readPid(file: string): number | null {
  try {
    const match = /^(\d+)\n$/.exec(readFileSync(file, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
