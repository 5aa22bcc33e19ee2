// Each emulator keeps its guests' files in a folder named after its pid under the runtime's guests
// folder, so two emulators sharing a state directory never touch each other's guests; the folders of
// emulators that are gone (crashed, SIGKILLed) are removed when another starts.
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { isAlive } from "./host-signals.ts";
import { removeTree } from "./remove-tree.ts";

/**
 * This emulator's own folder under `guestsDir`, made 0700 (guest root may leave setuid-root files in
 * a guest's files there; no other host user may reach them), after removing the gone emulators'.
 */
export async function ownGuestsFolder(guestsDir: string): Promise<string> {
  await removeLeftoverGuests(guestsDir);
  const rootDir = join(guestsDir, String(process.pid));
  await mkdir(rootDir, { recursive: true, mode: 0o700 });
  return rootDir;
}

async function removeLeftoverGuests(guestsDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(guestsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const name of names) {
    const pid = Number(name);
    if (/^\d+$/.test(name) && pid !== process.pid && !isAlive(pid)) await removeTree(join(guestsDir, name));
  }
}
