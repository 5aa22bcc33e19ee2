// Removing a guest's files. Without root, a guest may leave directories without write permission for
// their owner (us), which rm cannot descend into: make them writable and try again.
import { chmod, readdir, rm } from "node:fs/promises";
import { join } from "node:path";

export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EACCES") throw error;
    await makeWritable(path);
    await rm(path, { recursive: true, force: true });
  }
}

async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(join(dir, entry.name));
  }
}
