// The part of cloud-init's NoCloud user data that an emulated guest honours: `write_files` and `runcmd`
// of a #cloud-config document. Anything else is reported in the boot log and the guest boots anyway,
// as a real guest would after a cloud-init module failed.
import { posix } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseDocument } from "yaml";

export interface GuestFile {
  /** Absolute path inside the guest, already checked to be writable there. */
  path: string;
  content: Buffer;
  mode: number;
  append: boolean;
}

/** A string runs through `sh` as written; a list is one argv, quoted by the boot script (as cloud-init does). */
export type BootCommand = string | string[];

export interface CloudConfig {
  writeFiles: GuestFile[];
  runcmd: BootCommand[];
  /** Boot log lines: what was skipped or ignored, and why. */
  log: string[];
}

export interface GuestLayout {
  username: string;
  /** Guest directories the guest user may write: files elsewhere are skipped. */
  writableRoots: string[];
}

const handledKeys = new Set(["write_files", "runcmd"]);

export function parseCloudConfig(userData: string | undefined, layout: GuestLayout): CloudConfig {
  const config: CloudConfig = { writeFiles: [], runcmd: [], log: [] };
  if (userData === undefined || userData.trim() === "") return config;
  const firstLine = userData.split("\n", 1)[0]?.trimEnd() ?? "";
  if (!/^#cloud-config\s*$/.test(firstLine)) {
    config.log.push(
      `cloud-init: user data ignored: only #cloud-config documents are emulated (first line: ${JSON.stringify(firstLine.slice(0, 60))})`,
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
  if (ignored.length > 0) {
    config.log.push(`cloud-init: not emulated, ignored: ${ignored.join(", ")}`);
  }
  if (data.write_files !== undefined) readWriteFiles(data.write_files, layout, config);
  if (data.runcmd !== undefined) readRuncmd(data.runcmd, config);
  return config;
}

function readWriteFiles(value: unknown, layout: GuestLayout, config: CloudConfig): void {
  if (!Array.isArray(value)) {
    config.log.push("cloud-init: write_files ignored: it must be a list");
    return;
  }
  value.forEach((entry: unknown, index) => {
    const file = readWriteFile(entry, layout);
    if (typeof file === "string") config.log.push(`cloud-init: write_files[${index}] skipped: ${file}`);
    else {
      config.writeFiles.push(file.file);
      config.log.push(
        ...file.notes.map((note) => `cloud-init: write_files[${index}] ${file.file.path}: ${note}`),
      );
    }
  });
}

/** The file to write and notes about ignored fields, or why the entry is skipped. */
function readWriteFile(entry: unknown, layout: GuestLayout): { file: GuestFile; notes: string[] } | string {
  if (!isRecord(entry)) return "an entry must be a mapping";
  if (typeof entry.path !== "string" || entry.path === "") return "path is missing";
  if (!posix.isAbsolute(entry.path)) return `path ${entry.path} is not absolute`;
  const path = posix.normalize(entry.path);
  if (!layout.writableRoots.some((root) => path.startsWith(`${root}/`))) {
    return `${path} is outside ${layout.writableRoots.join(" and ")}, the only writable places in an emulated guest`;
  }
  const content = decodeContent(entry.content, entry.encoding);
  if (typeof content === "string") return `${path}: ${content}`;
  const mode = readMode(entry.permissions);
  if (mode === undefined)
    return `${path}: permissions ${JSON.stringify(entry.permissions)} is not an octal mode`;
  const notes: string[] = [];
  const owner = entry.owner;
  if (owner !== undefined && owner !== layout.username && owner !== `${layout.username}:${layout.username}`) {
    notes.push(`owner ${JSON.stringify(owner)} ignored, files belong to ${layout.username}`);
  }
  return { file: { path, content, mode, append: entry.append === true }, notes };
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

function readRuncmd(value: unknown, config: CloudConfig): void {
  if (!Array.isArray(value)) {
    config.log.push("cloud-init: runcmd ignored: it must be a list");
    return;
  }
  value.forEach((item: unknown, index) => {
    if (typeof item === "string") config.runcmd.push(item);
    else if (Array.isArray(item) && item.length > 0 && item.every(isScalar))
      config.runcmd.push(item.map(String));
    else config.log.push(`cloud-init: runcmd[${index}] skipped: it must be a string or a list of strings`);
  });
}

function isScalar(value: unknown): boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
