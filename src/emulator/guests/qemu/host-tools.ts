// The host programs the QEMU guests need, and running them. A missing one is named together with
// the Debian package that brings it, so a bad set-up says what to install rather than "ENOENT".
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Each program by the Debian package that installs it. */
export const hostTools = {
  "qemu-system-x86_64": "qemu-system-x86",
  "qemu-img": "qemu-utils",
  mmdebstrap: "mmdebstrap",
  "mkfs.ext4": "e2fsprogs",
  busybox: "busybox-static",
  cpio: "cpio",
  gzip: "gzip",
  xorriso: "xorriso",
  "apt-get": "apt",
  "apt-cache": "apt",
  "dpkg-deb": "dpkg",
  chroot: "coreutils",
  setpriv: "util-linux",
} as const;

export type HostTool = keyof typeof hostTools;

/** The full path of a program in PATH (sbin folders included: mkfs.ext4 lives there), or undefined. */
export function findTool(name: string): string | undefined {
  const folders = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin"];
  for (const folder of folders) {
    if (!folder) continue;
    const path = join(folder, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Throws one error naming every missing program and the packages that bring them. */
export function requireTools(names: readonly HostTool[]): void {
  const missing = names.filter((name) => findTool(name) === undefined);
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((name) => hostTools[name]))];
  const what = missing.length === 1 ? `${missing[0]} is` : `${missing.join(", ")} are`;
  throw new Error(`${what} not installed: apt-get install ${packages.join(" ")}`);
}

/**
 * Runs a program to its end; rejects with its last lines of output when it fails, since tools like
 * mmdebstrap explain themselves only there.
 */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { ...options, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const tail = `${stderr}${stdout}`.trim().split("\n").slice(-15).join("\n");
        reject(
          new Error(
            `${file} ${args.slice(0, 3).join(" ")}... failed (${error.message.split("\n")[0]})\n${tail}`,
          ),
        );
      },
    );
  });
}
