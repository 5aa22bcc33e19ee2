// The guest's initramfs: busybox and the few modules Debian's cloud kernel needs before it can reach
// its root disk. That kernel has ext4 and the serial console built in but virtio as modules, and
// the root disk is a virtio disk; the NoCloud seed is an ISO 9660 (or vfat) disk, whose modules are
// loaded here too so that cloud-init finds its seed even before udev has settled. Everything else
// the root disk's own udev loads from /lib/modules.
import { chmod, copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { findTool, run } from "./host-tools.ts";

/** What the initramfs loads; the modules they depend on come along, each loaded before its users. */
export const initramfsModules = ["virtio_pci", "virtio_blk", "virtio_net", "isofs", "vfat"] as const;

/** The root disk's label: the initramfs mounts it by device, the root disk's fstab by label. */
export const rootLabel = "lab-root";

// A root disk that does not appear ends the boot with a line naming it and a power-off, so that
// QEMU exits and the VMI fails with that line in its console log instead of hanging in a shell.
export const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console of its own, so init starts without stdout: take it now.
exec </dev/console >/dev/console 2>&1
for module in $(cat /modules/order); do
  insmod /modules/$module.ko || echo "lab-initramfs: loading $module failed"
done
tries=0
while [ ! -b /dev/vda ] && [ $tries -lt 300 ]; do sleep 0.1; tries=$((tries + 1)); done
if ! mount -t ext4 -o ro /dev/vda /root; then
  echo "lab-initramfs: cannot mount the root disk /dev/vda; powering off"
  poweroff -f
fi
umount /sys /proc
mount --move /dev /root/dev
exec switch_root /root /sbin/init
`;

/**
 * Writes initrd.gz from the kernel's unpacked package (kernelRoot) into outFile. Modules the kernel
 * has built in are skipped; one it has neither way is an error, since the guest could not boot.
 */
export async function buildInitramfs(kernelRoot: string, release: string, workDir: string, outFile: string) {
  const busybox = findTool("busybox");
  if (!busybox || !(await isStatic(busybox))) {
    throw new Error(
      "busybox-static is not installed (a static busybox runs without a libc): apt-get install busybox-static",
    );
  }
  const tree = join(workDir, "initramfs");
  for (const folder of ["bin", "dev", "proc", "sys", "root", "modules"]) {
    await mkdir(join(tree, folder), { recursive: true });
  }
  await copyFile(busybox, join(tree, "bin/busybox"));
  await chmod(join(tree, "bin/busybox"), 0o755);
  await writeFile(join(tree, "init"), initScript, { mode: 0o755 });

  const modulesDir = join(kernelRoot, "lib/modules", release);
  const order = await loadOrder(
    join(modulesDir, "kernel"),
    await readFile(join(modulesDir, "modules.builtin"), "utf8"),
    release,
  );
  for (const [name, file] of order) await copyFile(file, join(tree, "modules", `${name}.ko`));
  await writeFile(join(tree, "modules/order"), `${[...order.keys()].join("\n")}\n`);
  await run(
    "sh",
    ["-c", `find . -print0 | cpio --null --create --format=newc --quiet | gzip -6 > "$1"`, "sh", outFile],
    {
      cwd: tree,
    },
  );
}

/**
 * The modules to load, dependencies first, by name and file. busybox's insmod knows no modules.dep,
 * so the order comes from each module's own "depends=" (its .modinfo section). Built-in ones are
 * left out; one the kernel has neither way is an error, since the guest could not boot.
 */
async function loadOrder(kernelDir: string, builtin: string, release: string): Promise<Map<string, string>> {
  const files = await moduleFiles(kernelDir);
  const order = new Map<string, string>();
  const visit = async (name: string): Promise<void> => {
    if (order.has(name)) return;
    const file = files.get(name);
    if (!file) {
      if (builtin.includes(`/${name}.ko`)) return;
      throw new Error(`kernel ${release} has no module ${name}`);
    }
    const depends = /depends=([^\0]*)\0/.exec((await readFile(file)).toString("latin1"))?.[1] ?? "";
    for (const dependency of depends.split(",").filter(Boolean)) await visit(dependency);
    order.set(name, file);
  };
  for (const name of initramfsModules) await visit(name);
  return order;
}

async function moduleFiles(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ko")) {
      found.set(entry.name.slice(0, -3), join(entry.parentPath, entry.name));
    }
  }
  return found;
}

/** A dynamically linked program names its loader (PT_INTERP); a static one does not. */
async function isStatic(path: string): Promise<boolean> {
  const head = await readFile(path);
  return !head.subarray(0, 4096).includes("ld-linux");
}
