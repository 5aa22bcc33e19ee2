// Server secrets: the key that signs session cookies, the one agent keys derive from. Each is
// generated once and kept beside the other local state, so a restart does not sign everyone out or
// lock the lab agents out; a value from the environment wins when several replicas must share it.
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

export function loadOrCreateSessionSecret(dataDir: string, fromEnv: string | undefined): Promise<string> {
  return loadOrCreateSecret(dataDir, "session-secret", fromEnv);
}

export function loadOrCreateAgentKeySecret(dataDir: string, fromEnv: string | undefined): Promise<string> {
  // The file keeps its first name: data folders of earlier versions hold it, and their VMs' keys.
  return loadOrCreateSecret(dataDir, "agent-token-secret", fromEnv);
}

async function loadOrCreateSecret(
  dataDir: string,
  fileName: string,
  fromEnv: string | undefined,
): Promise<string> {
  if (fromEnv !== undefined) return fromEnv;
  const file = path.join(dataDir, fileName);
  try {
    const stored = (await readFile(file, "utf8")).trim();
    if (stored.length >= 32) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secret = randomBytes(32).toString("base64url");
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, secret + "\n", { mode: 0o600 });
  // `mode` only applies to new files; a short secret left behind may have been readable by others.
  await chmod(file, 0o600);
  return secret;
}
