// What a guest holds on the host beyond its processes, and how it gives it back: its home copied out
// for kill({ keepHome: true }), then, once its processes are gone, its cgroups, its folder and (as
// root) its uid of its own. guest-dir.ts makes the folder; this is the other end of its life.
import { execFile } from "node:child_process";
import type { GuestCgroup } from "../cgroups/guest-cgroups.ts";
import type { GuestLayout } from "./guest-dir.ts";
import { releaseGuestUid } from "../isolation/guest-uids.ts";
import { removeTree } from "../remove-tree.ts";

export class GuestHoldings {
  private uid: number | undefined;
  private readonly cgroup: GuestCgroup | undefined;

  constructor(
    private readonly layout: GuestLayout,
    owned: { uid: number | undefined; cgroup: GuestCgroup | undefined },
  ) {
    this.uid = owned.uid;
    this.cgroup = owned.cgroup;
  }

  /**
   * Copies the guest's home, as the host reaches it inside the guest (`from`), to the layout's homeDir.
   * The guest's processes must be stopped, so that none can swap a directory for a symlink meanwhile.
   */
  copyHomeOut(from: string, guestName: string): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      execFile("cp", ["-a", "--no-target-directory", from, this.layout.homeDir], (error, _out, stderr) =>
        error
          ? reject(
              new Error(`guest ${guestName}: keeping its home failed: ${stderr.trim() || error.message}`),
            )
          : resolve(),
      ),
    );
  }

  /**
   * Once the guest's processes are gone: kills whatever is left in its cgroups (a process the pid
   * namespace's end did not reach) and removes them, removes its files (all but the home copied out
   * with keepHome) and gives its uid back.
   */
  async release(keepHome: boolean): Promise<void> {
    const { guestDir, bootDir, rootMountPoint } = this.layout;
    await this.cgroup?.remove();
    if (keepHome) {
      for (const dir of [bootDir, rootMountPoint]) await removeTree(dir);
    } else {
      await removeTree(guestDir);
    }
    if (this.uid !== undefined) releaseGuestUid(this.uid);
    this.uid = undefined;
  }
}
