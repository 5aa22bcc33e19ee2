// What a guest's agent reports, in the shapes of KubeVirt's guestosinfo, userlist and filesystemlist
// subresources (kubevirt.io/api/core/v1 VirtualMachineInstanceGuestAgentInfo and friends).
import { readFile, statfs } from "node:fs/promises";
import os from "node:os";

export interface GuestOsUser {
  userName: string;
  domain: string;
  /** Seconds since the epoch, with a fraction. */
  loginTime: number;
}

export interface GuestFileSystem {
  diskName: string;
  mountPoint: string;
  fileSystemType: string;
  usedBytes: number;
  totalBytes: number;
  disk: { busType: string; serial?: string }[];
}

export interface GuestOsInfo {
  name: string;
  kernelRelease: string;
  version: string;
  prettyName: string;
  versionId: string;
  kernelVersion: string;
  machine: string;
  id: string;
}

export interface GuestAgentInfo {
  guestAgentVersion: string;
  supportedCommands: { name: string; enabled: boolean }[];
  hostname: string;
  os: GuestOsInfo;
  timezone: string;
  userList: GuestOsUser[];
  fsInfo: { disks: GuestFileSystem[] };
  fsFreezeStatus: string;
}

export interface GuestOsUserList {
  metadata: Record<string, never>;
  items: GuestOsUser[];
}

export interface GuestFileSystemList {
  metadata: Record<string, never>;
  items: GuestFileSystem[];
}

export interface GuestMount {
  diskName: string;
  mountPoint: string;
  /** Where the guest's files really are, for their sizes. */
  hostPath: string;
}

export interface GuestFacts {
  hostname: string;
  username: string;
  /** When the guest user's console session began, in seconds since the epoch. */
  loginTime: number;
  mounts: GuestMount[];
}

export const guestAgentVersion = "lab-console-emulator";

// The qemu-guest-agent commands whose answers these functions emulate.
const supportedCommands = [
  "guest-info",
  "guest-ping",
  "guest-get-osinfo",
  "guest-get-host-name",
  "guest-get-timezone",
  "guest-get-users",
  "guest-get-fsinfo",
].map((name) => ({ name, enabled: true }));

export async function guestAgentInfo(facts: GuestFacts): Promise<GuestAgentInfo> {
  return {
    guestAgentVersion,
    supportedCommands,
    hostname: facts.hostname,
    os: await hostOsInfo(),
    timezone: timezone(),
    userList: users(facts),
    fsInfo: { disks: await fileSystems(facts) },
    fsFreezeStatus: "",
  };
}

export function guestUserList(facts: GuestFacts): GuestOsUserList {
  return { metadata: {}, items: users(facts) };
}

export async function guestFileSystemList(facts: GuestFacts): Promise<GuestFileSystemList> {
  return { metadata: {}, items: await fileSystems(facts) };
}

function users(facts: GuestFacts): GuestOsUser[] {
  return [{ userName: facts.username, domain: "", loginTime: facts.loginTime }];
}

// Magic numbers from statfs(2) for the file systems a guest's directories are likely to live on.
const fileSystemTypes = new Map<number, string>([
  [0xef53, "ext4"],
  [0x58465342, "xfs"],
  [0x9123683e, "btrfs"],
  [0x01021994, "tmpfs"],
  [0x794c7630, "overlay"],
  [0x2fc12fc1, "zfs"],
  [0x6969, "nfs"],
  [0x65735546, "fuse"],
]);

async function fileSystems(facts: GuestFacts): Promise<GuestFileSystem[]> {
  return Promise.all(
    facts.mounts.map(async (mount) => {
      const stats = await statfs(mount.hostPath);
      return {
        diskName: mount.diskName,
        mountPoint: mount.mountPoint,
        fileSystemType: fileSystemTypes.get(stats.type) ?? "unknown",
        usedBytes: (stats.blocks - stats.bfree) * stats.bsize,
        totalBytes: stats.blocks * stats.bsize,
        disk: [{ busType: "virtio" }],
      };
    }),
  );
}

// Guests run the host's system read-only, so the host's os-release is what they run.
let osRelease: Promise<Map<string, string>> | undefined;

async function hostOsInfo(): Promise<GuestOsInfo> {
  osRelease ??= readOsRelease();
  const release = await osRelease;
  return {
    name: release.get("NAME") ?? "Linux",
    kernelRelease: os.release(),
    version: release.get("VERSION") ?? "",
    prettyName: release.get("PRETTY_NAME") ?? "Linux",
    versionId: release.get("VERSION_ID") ?? "",
    kernelVersion: os.version(),
    machine: os.machine(),
    id: release.get("ID") ?? "linux",
  };
}

async function readOsRelease(): Promise<Map<string, string>> {
  for (const path of ["/etc/os-release", "/usr/lib/os-release"]) {
    try {
      return parseOsRelease(await readFile(path, "utf8"));
    } catch {
      // try the next location; neither is required
    }
  }
  return new Map();
}

function parseOsRelease(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (!match?.[1] || match[2] === undefined) continue;
    values.set(match[1], unquote(match[2]));
  }
  return values;
}

function unquote(value: string): string {
  const quoted = /^(["'])(.*)\1$/.exec(value);
  if (!quoted) return value;
  const [, quote, inner = ""] = quoted;
  return quote === '"' ? inner.replace(/\\(["\\$`])/g, "$1") : inner;
}

// Formatted as KubeVirt does from qemu-ga's guest-get-timezone: "<zone>, <offset seconds east of UTC>".
function timezone(): string {
  const now = new Date();
  const zone =
    new Intl.DateTimeFormat("en-US", { timeZoneName: "short" })
      .formatToParts(now)
      .find((part) => part.type === "timeZoneName")?.value ?? "UTC";
  return `${zone}, ${-now.getTimezoneOffset() * 60}`;
}
