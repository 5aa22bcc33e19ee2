// The one image every QEMU guest boots, whatever its VMI's containerDisk names: Debian bookworm
// built from packages on this machine, since no registry is reachable but Debian's archive is.
// - the kernel: Debian's cloud kernel, downloaded and unpacked (never installed on the host);
// - the initramfs: busybox and the virtio modules (initramfs.ts);
// - the root disk: mmdebstrap's minbase with systemd, cloud-init (NoCloud) and what the labs use,
//   the kernel's modules added for udev, made into an ext4 image with mkfs.ext4 -d.
// It is kept under `<stateDir>/qemu-images/<hash of its inputs>`, built in a temporary folder and
// renamed into place when complete, so a build that fails or is killed leaves nothing that looks
// ready; a later start removes what such a build left.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isAlive } from "../host-signals.ts";
import { buildInitramfs, initramfsModules, initScript, rootLabel } from "./initramfs.ts";
import { findTool, requireTools, run } from "./host-tools.ts";

/** Bump when the build below changes in a way its other inputs do not show. */
const buildVersion = 1;
const suite = "bookworm";
const kernelPackage = "linux-image-cloud-amd64";

/** What the root disk holds beyond minbase: the guest's init, cloud-init, the agent's needs, the labs' tools. */
export const imagePackages = [
  "systemd-sysv",
  "udev",
  "kmod",
  "cloud-init",
  "qemu-guest-agent",
  // systemd-logind handles the ACPI power button that a VMI's deletion presses, and cannot start
  // without the system bus: without dbus the guest ignores the button and is killed at the end of
  // its grace period.
  "dbus",
  "python3",
  "sudo",
  "git",
  "iproute2",
  "ifupdown",
  "isc-dhcp-client",
  "procps",
  // cloud-init's locale module runs update-locale, which only this package ships: without it
  // cloud-init ends with status "error".
  "locales",
  "less",
  "nano",
  "ca-certificates",
];

/** The root disk as the guest sees it; its file is sparse, so the unused part costs nothing. */
const rootDiskSize = "8G";

// Files the root disk gets on top of its packages, by path.
const extraFiles: Record<string, string> = {
  "etc/fstab": `LABEL=${rootLabel} / ext4 defaults,errors=remount-ro 0 1\n`,
  // Only the NoCloud seed is ever there: probing cloud providers' metadata addresses would only
  // cost boot time.
  // C.UTF-8 is built into glibc, so cloud-init need not generate a locale at each first boot (as the
  // sandboxed guests, whose LANG is C.UTF-8).
  "etc/cloud/cloud.cfg.d/90-lab-console.cfg": "datasource_list: [ NoCloud, None ]\nlocale: C.UTF-8\n",
  // A fresh machine-id on each VMI's first boot (systemd writes it when the file is empty).
  "etc/machine-id": "",
};

export interface GuestImageFiles {
  dir: string;
  kernel: string;
  initrd: string;
  /** Raw ext4; each guest boots a copy-on-write overlay of it, never the file itself. */
  rootDisk: string;
  /** The kernel's release, as `uname -r` prints it in the guest. */
  kernelRelease: string;
}

const imageTools = [
  "mmdebstrap",
  "mkfs.ext4",
  "busybox",
  "cpio",
  "gzip",
  "apt-get",
  "apt-cache",
  "dpkg-deb",
  "chroot",
] as const;

/** The folder name of the image these inputs make. */
export function imageKey(): string {
  const inputs = JSON.stringify({
    buildVersion,
    suite,
    kernelPackage,
    imagePackages,
    extraFiles,
    initScript,
    initramfsModules,
    rootDiskSize,
  });
  return createHash("sha256").update(inputs).digest("hex").slice(0, 16);
}

/**
 * The image, built first when it is missing (minutes: mmdebstrap downloads and unpacks about 400 MB).
 * `log` hears each step of a build; a cached image says nothing.
 */
export async function ensureGuestImage(
  stateDir: string,
  log: (line: string) => void = () => {},
): Promise<GuestImageFiles> {
  // Absolute: the initramfs is archived from inside its own folder, so a relative path (such as
  // `npm run guest-image`'s default) would point nowhere there.
  const imagesDir = resolve(stateDir, "qemu-images");
  const dir = join(imagesDir, imageKey());
  if (existsSync(join(dir, "image.json"))) return filesOf(dir);
  requireTools(imageTools);
  if (process.getuid?.() !== 0) {
    throw new Error(
      "building the guest image needs root (mmdebstrap --mode=root, chroot); run it once as root",
    );
  }
  await mkdir(imagesDir, { recursive: true });
  await removeAbandonedBuilds(imagesDir);
  const work = join(imagesDir, `.build-${process.pid}-${imageKey()}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(work);
  try {
    const started = Date.now();
    const step = (what: string) =>
      log(`guest image: ${what} (${Math.round((Date.now() - started) / 1000)} s)`);
    const out = join(work, "image");
    await mkdir(out);

    step(`downloading ${kernelPackage}`);
    const { root: kernelRoot, release } = await downloadKernel(work);
    await cp(join(kernelRoot, "boot", `vmlinuz-${release}`), join(out, "vmlinuz"));

    step("building the initramfs");
    await buildInitramfs(kernelRoot, release, work, join(out, "initrd.gz"));

    step(`mmdebstrap ${suite} with ${imagePackages.length} packages (minutes)`);
    const rootfs = join(work, "rootfs");
    await run(findTool("mmdebstrap")!, [
      "--mode=root",
      "--variant=minbase",
      `--include=${imagePackages.join(",")}`,
      suite,
      rootfs,
    ]);
    // udev loads the modules of the guest's devices (virtio-net, the agent's virtio-serial port)
    // from the root disk, and modprobe needs their index, which the kernel's package leaves to its
    // postinst: depmod runs in the root file system, whose kmod matches it.
    await cp(join(kernelRoot, "lib/modules", release), join(rootfs, "usr/lib/modules", release), {
      recursive: true,
    });
    await run(findTool("chroot")!, [rootfs, "depmod", "-a", release]);
    for (const [path, content] of Object.entries(extraFiles)) {
      await mkdir(join(rootfs, path, ".."), { recursive: true });
      await writeFile(join(rootfs, path), content);
    }

    step("making the ext4 root disk");
    await run(findTool("mkfs.ext4")!, [
      "-q",
      "-L",
      rootLabel,
      "-d",
      rootfs,
      join(out, "root.img"),
      rootDiskSize,
    ]);
    await rm(rootfs, { recursive: true, force: true });
    await writeFile(
      join(out, "image.json"),
      JSON.stringify({ kernelRelease: release, suite, packages: imagePackages }, null, 2),
    );

    step("done");
    try {
      await rename(out, dir);
    } catch (error) {
      // Another emulator finished the same image first: its copy is as good as ours.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    }
    await removeOtherImages(imagesDir, imageKey());
    return filesOf(dir);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function filesOf(dir: string): Promise<GuestImageFiles> {
  const meta = JSON.parse(await readFile(join(dir, "image.json"), "utf8")) as { kernelRelease: string };
  return {
    dir,
    kernel: join(dir, "vmlinuz"),
    initrd: join(dir, "initrd.gz"),
    rootDisk: join(dir, "root.img"),
    kernelRelease: meta.kernelRelease,
  };
}

/** The kernel package the cloud metapackage points at today, unpacked under work/kernel. */
async function downloadKernel(work: string): Promise<{ root: string; release: string }> {
  const depends = await run(findTool("apt-cache")!, ["depends", kernelPackage]);
  const name = /Depends: (linux-image-\S+)/.exec(depends)?.[1];
  if (!name) throw new Error(`apt-cache cannot resolve ${kernelPackage}; run apt-get update`);
  const downloads = join(work, "debs");
  await mkdir(downloads);
  await run(findTool("apt-get")!, ["download", "-q", name], { cwd: downloads });
  const [deb] = (await readdir(downloads)).filter((file) => file.endsWith(".deb"));
  if (!deb) throw new Error(`apt-get download ${name} left no package`);
  const root = join(work, "kernel");
  await run(findTool("dpkg-deb")!, ["-x", join(downloads, deb), root]);
  const [release] = await readdir(join(root, "lib/modules"));
  if (!release) throw new Error(`${name} has no /lib/modules`);
  return { root, release };
}

/**
 * Images of earlier inputs: nothing boots them any more. A guest still running from one keeps its
 * open file, so removing it does not disturb that guest.
 */
async function removeOtherImages(imagesDir: string, current: string): Promise<void> {
  for (const name of await readdir(imagesDir)) {
    if (/^[0-9a-f]{16}$/.test(name) && name !== current)
      await rm(join(imagesDir, name), { recursive: true, force: true });
  }
}

/** Builds whose emulator is gone (killed mid-build) left their folders behind. */
async function removeAbandonedBuilds(imagesDir: string): Promise<void> {
  for (const name of await readdir(imagesDir)) {
    const pid = Number(/^\.build-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid))
      await rm(join(imagesDir, name), { recursive: true, force: true });
  }
}
