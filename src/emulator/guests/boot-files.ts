// The files a guest boots from, generated per guest and mounted read-only at BOOT_DIR: the init script,
// emulated cloud-init, the console loop, /etc files that name the guest and its user, and the contents
// of write_files. Pure: guest.ts writes them to disk.
import type { CloudConfig } from "./cloud-init.ts";
import { GUEST_UID, RELAY_UID, asUser } from "./sandbox.ts";
import { shellJoin, shellQuote } from "./shell-quote.ts";

export const BOOT_DIR = "/run/lab-guest";
/** Mounted over these paths of the host's /etc (relative file name in the boot directory -> guest path). */
export const etcOverrides: Record<string, string> = {
  "etc-passwd": "/etc/passwd",
  "etc-group": "/etc/group",
  "etc-hosts": "/etc/hosts",
  "etc-hostname": "/etc/hostname",
};
/** An empty file in the boot directory that the emulator's node binary is mounted over. */
export const NODE_PATH = `${BOOT_DIR}/node`;
export const RELAY_SCRIPT = "port-relay.mjs";
export const INIT_SCRIPT = `${BOOT_DIR}/init.sh`;
/** fd 3 in the sandbox: Node's IPC channel, which only the port relay keeps. */
export const RELAY_CHANNEL_FD = 3;
/** fd 4 in the sandbox: boot progress lines for the emulator ("started", then "booted"). */
export const STATUS_FD = 4;

export interface BootInput {
  hostname: string;
  username: string;
  homeDir: string;
  cloudConfig: CloudConfig;
  privileged: boolean;
}

/** File name (relative to the boot directory) -> content. */
export function bootFiles(input: BootInput): Map<string, string | Buffer> {
  const files = new Map<string, string | Buffer>([
    ["init.sh", initScript(input.privileged)],
    ["cloud-init.sh", cloudInitScript(input)],
    ["runcmd.sh", runcmdScript(input.cloudConfig)],
    ["console.sh", consoleScript],
    ["node", ""],
    ["etc-passwd", passwd(input.username, input.homeDir)],
    ["etc-group", group(input.username)],
    ["etc-hosts", hosts(input.hostname)],
    ["etc-hostname", `${input.hostname}\n`],
  ]);
  input.cloudConfig.writeFiles.forEach((file, index) => files.set(`files/${index}`, file.content));
  return files;
}

function initScript(privileged: boolean): string {
  const asRelay = shellJoin(asUser(RELAY_UID, privileged));
  const asGuest = shellJoin(asUser(GUEST_UID, privileged));
  const relay = RELAY_CHANNEL_FD;
  const status = STATUS_FD;
  return `# The sandbox's first process (root inside the namespaces when the emulator runs as root).
# fd ${relay} is the emulator's IPC channel and fd ${status} its boot status pipe: only the port relay keeps
# the channel, and no guest process may inherit either of them.
exec 2>&1
echo started >&${status}
${asRelay} ${NODE_PATH} ${BOOT_DIR}/${RELAY_SCRIPT} </dev/null ${status}>&- &
unset NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE
exec ${relay}>&-
${asGuest} /bin/sh ${BOOT_DIR}/cloud-init.sh </dev/null ${status}>&-
echo booted >&${status}
exec ${status}>&-
exec ${asGuest} /bin/sh ${BOOT_DIR}/console.sh
`;
}

// Like a getty on a serial port: a fresh shell whenever the last one ends. script(1) gives bash a
// terminal (job control, Ctrl-C, stty) while the emulator holds plain pipes, as a serial line would.
const consoleScript = `while :; do
  script -qec 'stty rows 24 cols 80; exec bash -l' /dev/null
  sleep 0.2
done
`;

function cloudInitScript(input: BootInput): string {
  const { cloudConfig } = input;
  const lines = [
    "# Emulated cloud-init: runs as the guest user before the console starts; its output goes to the console.",
    "umask 022",
    'cd "$HOME"',
    '[ -d /etc/skel ] && cp -rT /etc/skel "$HOME"',
    ...cloudConfig.log.map((line) => `printf '%s\\n' ${shellQuote(line)}`),
  ];
  if (cloudConfig.writeFiles.length > 0) {
    lines.push(
      `lab_write() {
  mkdir -p -- "$(dirname -- "$2")" &&
    if [ "$4" = append ]; then cat -- "$1" >>"$2"; else cat -- "$1" >"$2"; fi &&
    chmod "$3" -- "$2" ||
    echo "cloud-init: write_files: could not write $2"
}`,
      ...cloudConfig.writeFiles.map(
        (file, index) =>
          `lab_write ${BOOT_DIR}/files/${index} ${shellQuote(file.path)} ${file.mode.toString(8)} ${file.append ? "append" : "replace"}`,
      ),
    );
  }
  if (cloudConfig.runcmd.length > 0) {
    lines.push(`sh ${BOOT_DIR}/runcmd.sh || echo "cloud-init: runcmd exited with status $?"`);
  }
  lines.push("echo 'cloud-init: finished'");
  return `${lines.join("\n")}\n`;
}

// cloud-init's own format: one script, strings verbatim, lists quoted into one command line each.
function runcmdScript(cloudConfig: CloudConfig): string {
  const commands = cloudConfig.runcmd.map((command) =>
    typeof command === "string" ? command : shellJoin(command),
  );
  return ["#!/bin/sh", ...commands, ""].join("\n");
}

function passwd(username: string, homeDir: string): string {
  return [
    "root:x:0:0:root:/root:/usr/sbin/nologin",
    `${username}:x:${GUEST_UID}:${GUEST_UID}:${username}:${homeDir}:/bin/bash`,
    `nobody:x:${RELAY_UID}:${RELAY_UID}:nobody:/nonexistent:/usr/sbin/nologin`,
    "",
  ].join("\n");
}

function group(username: string): string {
  return ["root:x:0:", "tty:x:5:", `${username}:x:${GUEST_UID}:`, `nogroup:x:${RELAY_UID}:`, ""].join("\n");
}

function hosts(hostname: string): string {
  return [
    "127.0.0.1 localhost",
    `127.0.1.1 ${hostname}`,
    "::1 localhost ip6-localhost ip6-loopback",
    "",
  ].join("\n");
}
