// The host's view of a QEMU guest, for the real-guest tests and bench: its process, found and waited out.
import { readdirSync, readFileSync } from "node:fs";
import { eventually } from "../../../../common/testing/patience.ts";

/** The QEMU process of a VMI's guest, found by the guest name on its command line (qemu-command.ts). */
export function qemuPidOf(vmiName: string): number | undefined {
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes("qemu-system") && cmdline.includes(`guest=${vmiName},`)) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Resolves once the VMI's QEMU has exited; fails after `timeoutMs` (made patient). */
export async function untilQemuGone(vmiName: string, timeoutMs: number): Promise<void> {
  await eventually(
    async () => qemuPidOf(vmiName),
    (pid) => pid === undefined,
    { timeoutMs, what: `the QEMU of ${vmiName} to end` },
  );
}
