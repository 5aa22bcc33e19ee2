// As root, each guest's user runs as a host uid of its own, so that per-uid limits (RLIMIT_NPROC) and
// the kernel's uid checks (kill, ptrace, file owners) separate guests from each other and from every
// host user. The uid is never one a host account has: it comes from a range above the usual ones
// (2^20 up), is left out when /etc/passwd, /etc/group, /etc/subuid or /etc/subgid name it, and
// is derived from the emulator's pid, so two emulators on one host, which have different pids, never
// hand out the same one without having to agree on anything.
import { readFile } from "node:fs/promises";

const base = 2 ** 20;
/**
 * Guests one emulator may run at once. With Linux's largest pid (2^22) the highest uid stays below
 * 2^31, which some tools still treat as signed.
 */
export const guestUidSlots = 500;

const inUse = new Set<number>();

/** A uid (and gid of the same number) for a new guest; give it back with releaseGuestUid. */
export async function allocateGuestUid(): Promise<number> {
  const taken = await hostIds();
  const first = base + process.pid * guestUidSlots;
  for (let uid = first; uid < first + guestUidSlots; uid++) {
    if (inUse.has(uid) || taken(uid)) continue;
    inUse.add(uid);
    return uid;
  }
  throw new Error(`this emulator already runs ${inUse.size} guests, as many as it has uids for`);
}

export function releaseGuestUid(uid: number): void {
  inUse.delete(uid);
}

/** Whether a host account, group or subordinate id range (rootless containers) has the id. */
async function hostIds(): Promise<(id: number) => boolean> {
  const single = new Set<number>();
  const ranges: [number, number][] = [];
  for (const file of ["/etc/passwd", "/etc/group"]) {
    for (const fields of await colonFile(file)) {
      const id = Number(fields[2]);
      if (Number.isInteger(id)) single.add(id);
    }
  }
  for (const file of ["/etc/subuid", "/etc/subgid"]) {
    for (const fields of await colonFile(file)) {
      const [start, count] = [Number(fields[1]), Number(fields[2])];
      if (Number.isInteger(start) && Number.isInteger(count)) ranges.push([start, start + count]);
    }
  }
  return (id) => single.has(id) || ranges.some(([start, end]) => id >= start && id < end);
}

async function colonFile(path: string): Promise<string[][]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.split(":"));
}
