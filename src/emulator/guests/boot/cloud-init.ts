// The part of cloud-init's NoCloud user data that an emulated guest honours, read from a #cloud-config
// document: bootcmd, write_files (with defer), packages (and package_update / package_upgrade, which
// fail as without network), runcmd. guest_system/ runs them in cloud-init's order, as guest root.
// Anything else is reported in the boot log and the guest boots anyway, as a real guest would after
// a cloud-init module failed. Module names and semantics follow cloud-init's cc_bootcmd,
// cc_write_files (owner root:root, permissions 0644 by default; `defer` moves a file to the final
// stage, after users exist), cc_package_update_upgrade_install and cc_runcmd. `users` is honoured as
// far as a guest of one user can: the guest's own user (which the console logs in) and "default"
// exist already; any other is noted as not emulated.
//
// What the emulator does not do goes to its own log (notEmulated), never to the guest's console: a
// student reading the boot must see what a real guest prints, not the emulator's limits.
import { posix } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseDocument } from "yaml";

export interface GuestFile {
  /** Absolute path inside the guest, normalized. Whether the guest may write it shows at boot. */
  path: string;
  content: Buffer;
  mode: number;
  append: boolean;
  /** "user:group" (either part may be missing), resolved in the guest; default root:root. */
  owner: string;
  /** Written in cloud-init's final stage (write_files_deferred) instead of the init stage. */
  defer: boolean;
}

/** A string runs through `sh` as written; a list is one argv, quoted by the boot script (as cloud-init does). */
export type BootCommand = string | string[];

/** A package as `packages:` names it: a name, or [name, version]. */
export type PackageSpec = string | string[];

export interface CloudConfig {
  bootcmd: BootCommand[];
  writeFiles: GuestFile[];
  packages: PackageSpec[];
  packageUpdate: boolean;
  packageUpgrade: boolean;
  runcmd: BootCommand[];
  /** Boot log lines a real cloud-init would print too: what was skipped, and why. */
  log: string[];
  /** What a real guest would do that this emulator does not, for the emulator's own log. */
  notEmulated: string[];
}

const handledKeys = new Set([
  "bootcmd",
  "write_files",
  "runcmd",
  "packages",
  "package_update",
  "package_upgrade",
  "apt_update",
  "apt_upgrade",
  // Reboots after an install: nothing is ever installed here.
  "package_reboot_if_required",
  "apt_reboot_if_required",
  "users",
]);

export function emptyCloudConfig(): CloudConfig {
  return {
    bootcmd: [],
    writeFiles: [],
    packages: [],
    packageUpdate: false,
    packageUpgrade: false,
    runcmd: [],
    log: [],
    notEmulated: [],
  };
}

/** `guestUser`: the guest's one user, whom `users` may name. */
export function parseCloudConfig(userData: string | undefined, guestUser = "student"): CloudConfig {
  const config = emptyCloudConfig();
  if (userData === undefined || userData.trim() === "") return config;
  const firstLine = userData.split("\n", 1)[0]?.trimEnd() ?? "";
  if (!/^#cloud-config\s*$/.test(firstLine)) {
    config.notEmulated.push(
      `user data ignored: only #cloud-config documents are emulated (first line: ${JSON.stringify(firstLine.slice(0, 60))})`,
    );
    return config;
  }
  // cloud-init reads YAML 1.1 (PyYAML): `permissions: 0644` is octal there, and so it is here.
  const document = parseDocument(userData, { version: "1.1" });
  const [error] = document.errors;
  if (error) {
    config.log.push(`cloud-init: user data is not valid YAML, ignored: ${error.message.split("\n", 1)[0]}`);
    return config;
  }
  const data: unknown = document.toJS();
  if (data === null || data === undefined) return config;
  if (!isRecord(data)) {
    config.log.push("cloud-init: user data ignored: a #cloud-config document must be a mapping");
    return config;
  }
  const ignored = Object.keys(data).filter((key) => !handledKeys.has(key));
  if (ignored.length > 0) config.notEmulated.push(`ignored: ${ignored.join(", ")}`);
  if (data.users !== undefined) readUsers(data.users, guestUser, config);
  if (data.bootcmd !== undefined) config.bootcmd = readCommands("bootcmd", data.bootcmd, config);
  if (data.write_files !== undefined) readWriteFiles(data.write_files, config);
  if (data.packages !== undefined) readPackages(data.packages, config);
  config.packageUpdate = data.package_update === true || data.apt_update === true;
  config.packageUpgrade = data.package_upgrade === true || data.apt_upgrade === true;
  if (data.runcmd !== undefined) config.runcmd = readCommands("runcmd", data.runcmd, config);
  return config;
}

/** What the guest's own user has from the start: its name, a description, bash, no password. */
const ownUserKeys = new Set(["name", "gecos", "shell", "lock_passwd"]);

function readUsers(value: unknown, guestUser: string, config: CloudConfig): void {
  const entries: unknown[] = Array.isArray(value) ? value : [value];
  const others: string[] = [];
  for (const entry of entries) {
    const name = isRecord(entry) ? entry.name : entry;
    if (name === "default") continue;
    if (name !== guestUser) {
      others.push(typeof name === "string" ? name : "an entry without a name");
      continue;
    }
    const extra = isRecord(entry) ? Object.keys(entry).filter((key) => !ownUserKeys.has(key)) : [];
    if (extra.length > 0) config.notEmulated.push(`users ignored for ${guestUser}: ${extra.join(", ")}`);
  }
  if (others.length > 0) {
    config.notEmulated.push(`users ignored: ${others.join(", ")} (a guest here has one user, ${guestUser})`);
  }
}

function readWriteFiles(value: unknown, config: CloudConfig): void {
  if (!Array.isArray(value)) {
    config.log.push("cloud-init: write_files ignored: it must be a list");
    return;
  }
  value.forEach((entry: unknown, index) => {
    const file = readWriteFile(entry);
    if (typeof file === "string") config.log.push(`cloud-init: write_files[${index}] skipped: ${file}`);
    else config.writeFiles.push(file);
  });
}

/** The file to write, or why the entry is skipped. */
function readWriteFile(entry: unknown): GuestFile | string {
  if (!isRecord(entry)) return "an entry must be a mapping";
  if (typeof entry.path !== "string" || entry.path === "") return "path is missing";
  if (!posix.isAbsolute(entry.path)) return `path ${entry.path} is not absolute`;
  const path = posix.normalize(entry.path);
  const content = decodeContent(entry.content, entry.encoding);
  if (typeof content === "string") return `${path}: ${content}`;
  const mode = readMode(entry.permissions);
  if (mode === undefined)
    return `${path}: permissions ${JSON.stringify(entry.permissions)} is not an octal mode`;
  const owner = entry.owner === undefined || entry.owner === null ? "root:root" : entry.owner;
  if (typeof owner !== "string" || !/^[a-z_][a-z0-9_-]*\$?(:[a-z_][a-z0-9_-]*\$?)?$/i.test(owner)) {
    return `${path}: owner ${JSON.stringify(owner)} is not "user" or "user:group"`;
  }
  return { path, content, mode, owner, append: entry.append === true, defer: entry.defer === true };
}

function decodeContent(content: unknown, encoding: unknown): Buffer | string {
  if (content === undefined || content === null) return Buffer.alloc(0);
  const raw =
    content instanceof Uint8Array
      ? Buffer.from(content)
      : typeof content === "object"
        ? undefined
        : Buffer.from(String(content), "utf8");
  if (raw === undefined) return "content must be text";
  const name = encoding === undefined ? "text/plain" : String(encoding).toLowerCase();
  try {
    switch (name) {
      case "text/plain":
        return raw;
      case "b64":
      case "base64":
        return Buffer.from(raw.toString("utf8"), "base64");
      case "gz":
      case "gzip":
        return gunzipSync(raw);
      case "gz+b64":
      case "gz+base64":
      case "gzip+b64":
      case "gzip+base64":
        return gunzipSync(Buffer.from(raw.toString("utf8"), "base64"));
      default:
        return `encoding ${JSON.stringify(encoding)} is not one of b64, gzip, gz+b64`;
    }
  } catch (error) {
    return `content could not be decoded as ${name}: ${(error as Error).message}`;
  }
}

const defaultMode = 0o644;

function readMode(permissions: unknown): number | undefined {
  if (permissions === undefined || permissions === null) return defaultMode;
  if (typeof permissions === "number") {
    return Number.isInteger(permissions) && permissions >= 0 && permissions <= 0o7777
      ? permissions
      : undefined;
  }
  if (typeof permissions !== "string") return undefined;
  const digits = permissions.trim().replace(/^0o/i, "");
  if (!/^[0-7]{1,4}$/.test(digits)) return undefined;
  return parseInt(digits, 8);
}

function readPackages(value: unknown, config: CloudConfig): void {
  if (!Array.isArray(value)) {
    config.log.push("cloud-init: packages ignored: it must be a list");
    return;
  }
  value.forEach((item: unknown, index) => {
    if (typeof item === "string") config.packages.push(item);
    else if (Array.isArray(item) && item.length > 0 && item.every(isScalar))
      config.packages.push(item.map(String));
    else config.log.push(`cloud-init: packages[${index}] skipped: it must be a name or [name, version]`);
  });
}

function readCommands(module: string, value: unknown, config: CloudConfig): BootCommand[] {
  if (!Array.isArray(value)) {
    config.log.push(`cloud-init: ${module} ignored: it must be a list`);
    return [];
  }
  const commands: BootCommand[] = [];
  value.forEach((item: unknown, index) => {
    if (typeof item === "string") commands.push(item);
    else if (Array.isArray(item) && item.length > 0 && item.every(isScalar)) commands.push(item.map(String));
    else config.log.push(`cloud-init: ${module}[${index}] skipped: it must be a string or a list of strings`);
  });
  return commands;
}

function isScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
