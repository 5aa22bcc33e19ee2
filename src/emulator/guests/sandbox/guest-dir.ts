// A guest's folder on the host, made before its sandbox starts: the boot files guest-setup.py and
// guest_system/ read (the image's commands, cloud-init's plan, the host programs they run), the
// places of the home a stopped guest keeps and of its port relay's socket, and the sandbox launch
// that mounts the boot files into the guest. Kept apart from the running guest (guest.ts) because
// all of it is done, and checked, before there is a process to talk to.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  BOOT_DIR,
  COMMANDS_SCRIPT,
  HOST_PYTHON,
  PRIVATE_DIR,
  SETUP_SCRIPT,
  SYSTEM_PACKAGE,
  SYSTEM_ZIP,
  bootFiles,
  bootScriptSource,
  compiledName,
  plumbingCommands,
  type PlumbingCommand,
} from "../boot/boot-files.ts";
import { parseCloudConfig } from "../boot/cloud-init.ts";
import { tty1AutologinUser } from "../boot/tty1-autologin.ts";
import type { GuestLimits } from "../cgroups/guest-limits.ts";
import { binPlanFor, hostCommand } from "../boot/guest-bin.ts";
import { defaultGuestImage, type GuestImage } from "../boot/images.ts";
import {
  SANDBOX_PATH,
  runsPrivileged,
  sandboxLaunch,
  type SandboxBackend,
  type SandboxPlan,
} from "../isolation/sandbox.ts";
import { socketPathMax } from "../relay/port-relay.ts";
import { zipApplication } from "../../../common/python-zipapp.ts";

/** What of startGuest's options shapes the guest's folder. */
export interface GuestDirOptions {
  name: string;
  userData?: string;
  image?: GuestImage;
  cloudInitDelayMs?: number;
}

let compiled: Promise<Map<string, Buffer>> | undefined;

/**
 * guest-setup.py and the guest_system package compiled by the host's python3, once per process: every
 * guest runs both, and compiling them is most of what starting python costs (a .pyc runs as it is,
 * from a zip too). The package's .pyc files go into one zip application, sources left out.
 */
function compiledScripts(): Promise<Map<string, Buffer>> {
  compiled ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "lab-guest-pyc-"));
    try {
      const packageDir = bootScriptSource(SYSTEM_PACKAGE);
      const modules = (await readdir(packageDir)).filter((name) => name.endsWith(".py")).sort();
      const sources = [
        [bootScriptSource(SETUP_SCRIPT), compiledName(SETUP_SCRIPT)],
        ...modules.map((module) => [join(packageDir, module), compiledName(module)]),
      ];
      const program =
        "import py_compile, sys\n" +
        "for source, target in zip(sys.argv[1::2], sys.argv[2::2]):\n" +
        "    py_compile.compile(source, cfile=target, doraise=True)\n";
      const args = sources.flatMap(([source, target]) => [source ?? "", join(dir, target ?? "")]);
      await new Promise<void>((resolve, reject) =>
        execFile(HOST_PYTHON, ["-IS", "-c", program, ...args], (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      const read = (name: string) => readFile(join(dir, name));
      const entries = await Promise.all(
        modules.map(async (module) => ({
          name: compiledName(module),
          data: await read(compiledName(module)),
        })),
      );
      return new Map([
        [compiledName(SETUP_SCRIPT), await read(compiledName(SETUP_SCRIPT))],
        [SYSTEM_ZIP, zipApplication(entries)],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

let plumbing: Record<PlumbingCommand, string> | undefined;

/** The host binaries the guest's own scripts run (at PLUMBING_DIR), found once per process. */
export function hostPlumbing(): Record<PlumbingCommand, string> {
  if (plumbing) return plumbing;
  if (!existsSync(HOST_PYTHON)) {
    throw new Error(
      `Guests need ${HOST_PYTHON} on the host (install the "python3" package): it runs their cloud-init and systemd`,
    );
  }
  const found: Partial<Record<PlumbingCommand, string>> = {};
  for (const command of plumbingCommands) {
    const path =
      command === "python3" ? hostCommand("python3", "/usr/bin") : hostCommand(command, SANDBOX_PATH);
    if (!path)
      throw new Error(`Guests need ${command} on the host (util-linux, coreutils), and it is missing`);
    found[command] = path;
  }
  plumbing = found as Record<PlumbingCommand, string>;
  return plumbing;
}

// A VMI name may have 253 characters, a Linux hostname 64: cut it to 63, the limit of a DNS label.
export function hostnameFor(name: string): string {
  return name.slice(0, 63);
}

export interface GuestLayout {
  guestDir: string;
  /** Where kill({ keepHome: true }) copies the home; the running guest's home is on its own disk. */
  homeDir: string;
  bootDir: string;
  rootMountPoint: string;
  /** Where the guest's port relay listens: in the emulator's own folder of guests, which no guest sees. */
  relaySocket: string;
  guestHome: string;
  hostname: string;
  shell: string;
  /** The user data gives the guest user autologin on tty1: a shell there, on its own pty. */
  tty1Autologin: boolean;
  bootLog: string[];
}

export async function prepareGuestDir(
  guestDir: string,
  options: GuestDirOptions,
  username: string,
  guestUid: number,
  limits: GuestLimits,
): Promise<GuestLayout> {
  const image = options.image ?? defaultGuestImage;
  const layout: GuestLayout = {
    guestDir,
    homeDir: join(guestDir, "home"),
    bootDir: join(guestDir, "boot"),
    rootMountPoint: join(guestDir, "root"),
    // Beside the guest's folder, not in it: a Unix socket's path has 107 bytes at most.
    relaySocket: join(dirname(guestDir), `relay-${randomBytes(8).toString("hex")}`),
    guestHome: `/home/${username}`,
    hostname: hostnameFor(options.name),
    shell: image.commands.has("bash") ? "/bin/bash" : "/bin/sh",
    tty1Autologin: false,
    bootLog: [],
  };
  if (Buffer.byteLength(layout.relaySocket) > socketPathMax) {
    throw new Error(
      `the guests' folder ${dirname(guestDir)} has too long a path for the port relay's socket (${socketPathMax} bytes at most)`,
    );
  }
  // Modes are set explicitly: the emulator's umask must not keep the guest's users from their boot files.
  for (const dir of [layout.bootDir, layout.rootMountPoint]) {
    await mkdir(dir);
    await chmod(dir, 0o755);
  }
  const privileged = runsPrivileged();

  const cloudConfig = parseCloudConfig(options.userData, username);
  layout.bootLog = cloudConfig.log;
  // Another user than the guest's one would not exist in it (a guest has one user, cloud-init.ts).
  layout.tty1Autologin = tty1AutologinUser(cloudConfig.writeFiles) === username;
  for (const note of cloudConfig.notEmulated)
    console.warn(`emulator: guest ${layout.hostname}: cloud-init ${note}`);
  const delay = Math.max(0, options.cloudInitDelayMs ?? 0);
  const files = bootFiles({
    hostname: layout.hostname,
    username,
    homeDir: layout.guestHome,
    shell: layout.shell,
    tty1Autologin: layout.tty1Autologin,
    image,
    cloudConfig,
    bins: binPlanFor(image, `${BOOT_DIR}/${COMMANDS_SCRIPT}`),
    plumbing: hostPlumbing(),
    privileged,
    guestUid,
    diskBytes: limits.diskBytes,
    processLimit: limits.pids,
    startedAt: Date.now(),
    initDelayMs: Math.round(delay / 4),
    runcmdDelayMs: delay,
  });
  files.set(COMMANDS_SCRIPT, await readFile(bootScriptSource(COMMANDS_SCRIPT)));
  for (const [name, content] of await compiledScripts()) files.set(name, content);
  // What guest root alone may read on a real guest (user data, write_files contents, shadow) is in
  // a directory only the emulator's own uid, which is guest root's, may enter.
  const made = new Set<string>();
  for (const [file, content] of files) {
    const path = join(layout.bootDir, file);
    const dir = dirname(path);
    const privateFile = file.startsWith(`${PRIVATE_DIR}/`);
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, privateFile ? 0o700 : 0o755);
      made.add(dir);
    }
    await writeFile(path, content);
    await chmod(path, privateFile ? 0o600 : file === COMMANDS_SCRIPT ? 0o755 : 0o644);
  }
  return layout;
}

export function launchOf(layout: GuestLayout, backend: SandboxBackend): [string, string[]] {
  const plan: SandboxPlan = {
    hostname: layout.hostname,
    // Mount points of the guest's disk, which guest-setup.py mounts there.
    directories: ["/home", "/root", layout.guestHome, "/tmp"],
    writable: [],
    readOnly: [{ hostPath: layout.bootDir, guestPath: BOOT_DIR }],
    workDir: layout.guestHome,
    rootMountPoint: layout.rootMountPoint,
    // Setup runs as the sandbox's root while the host's /usr/bin is still there, then execs init.sh.
    command: [
      HOST_PYTHON,
      "-IS",
      `${BOOT_DIR}/${compiledName(SETUP_SCRIPT)}`,
      `${BOOT_DIR}/${PRIVATE_DIR}/setup.plan`,
    ],
    commandRunsAsRoot: true,
    tty1: layout.tty1Autologin,
  };
  const launch = sandboxLaunch(plan, backend, runsPrivileged());
  return [launch.file, launch.args];
}
