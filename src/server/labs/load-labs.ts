// Loads every lab file in the labs directory at start-up. A bad file becomes a problem with its path
// and line; the good ones still load, so one typo does not take every lab offline.
import { closeSync, fstatSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { LabSummary } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { parseLab, type LabRules } from "./parse-lab.ts";

export type VmSizes = Record<string, { cpu: number; memory: string }>;

export const defaultVmSizes: VmSizes = {
  small: { cpu: 1, memory: "2Gi" },
  medium: { cpu: 2, memory: "4Gi" },
  large: { cpu: 4, memory: "8Gi" },
};

export interface LabProblem {
  file: string;
  line: number | null;
  message: string;
}

export const maxLabFileBytes = 256 * 1024;
const labFileExtension = ".yaml";

export function loadLabs(
  dir: string,
  sizes: VmSizes,
  rules: LabRules = {},
): { labs: Lab[]; problems: LabProblem[] } {
  const labs: Lab[] = [];
  const problems: LabProblem[] = [];
  const fileById = new Map<string, string>();

  const names = listLabFileNames(dir);
  if (!names.ok) return { labs, problems: [{ file: dir, line: null, message: names.message }] };

  for (const name of names.names) {
    const file = join(dir, name);
    const text = readLabFile(file);
    if (text === null) continue;
    if (!text.ok) {
      problems.push({ file, line: null, message: text.message });
      continue;
    }
    const parsed = parseLab(text.text, sizes, rules);
    if (!parsed.ok) {
      problems.push(...parsed.problems.map((problem) => ({ file, ...problem })));
      continue;
    }
    const earlier = fileById.get(parsed.lab.id);
    if (earlier !== undefined) {
      const message = `id: lab id "${parsed.lab.id}" is already used by ${earlier}`;
      problems.push({ file, line: parsed.idLine, message });
      continue;
    }
    fileById.set(parsed.lab.id, file);
    labs.push(parsed.lab);
  }
  return { labs, problems };
}

/** One line for a log: path:line: message. */
export function formatLabProblem(problem: LabProblem): string {
  return `${problem.file}${problem.line === null ? "" : `:${problem.line}`}: ${problem.message}`;
}

/** What students and staff see of a lab: no check commands, no image or cloud-init, no hints. */
export function toLabSummary(lab: Lab): LabSummary {
  const summary: LabSummary = {
    id: lab.id,
    title: lab.title,
    description: lab.description,
    vm: { cpu: lab.vm.cpu, memory: lab.vm.memory, nested: lab.vm.nested },
    session: { ...lab.session },
    checks: lab.checks.map((check) => {
      const title = check.translations?.title;
      return {
        id: check.id,
        title: check.title,
        points: check.points,
        selfCheck: check.selfCheck,
        ...(title && { translations: { title } }),
      };
    }),
  };
  if (lab.translations) summary.translations = lab.translations;
  return summary;
}

/**
 * Lab files are the directory's *.yaml entries, sorted by name so "the second file with the same id"
 * is always the same one. Hidden entries are skipped: a ConfigMap mounted as a directory keeps its
 * real files in ..data/ and shows them through symlinks, which are followed.
 */
function listLabFileNames(dir: string): { ok: true; names: string[] } | { ok: false; message: string } {
  try {
    const names = readdirSync(dir)
      .filter((name) => name.endsWith(labFileExtension) && !name.startsWith("."))
      .sort();
    return { ok: true, names };
  } catch (error) {
    return { ok: false, message: describeFsError(error, "the lab directory") };
  }
}

/** The file's text; null when it is not a regular file (a directory named x.yaml is not a lab). */
function readLabFile(file: string): { ok: true; text: string } | { ok: false; message: string } | null {
  let fd: number | undefined;
  try {
    // stat before open: opening a FIFO would block start-up.
    if (!statSync(file).isFile()) return null;
    fd = openSync(file, "r");
    if (fstatSync(fd).size > maxLabFileBytes) return tooLarge();
    // Read one byte past the limit in case the file grew since the stat.
    const buffer = Buffer.alloc(maxLabFileBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxLabFileBytes) return tooLarge();
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length)) };
  } catch (error) {
    if (error instanceof TypeError) return { ok: false, message: "is not valid UTF-8 text" };
    return { ok: false, message: describeFsError(error, "the file") };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function tooLarge(): { ok: false; message: string } {
  return { ok: false, message: `is larger than ${maxLabFileBytes / 1024} KiB` };
}

function describeFsError(error: unknown, what: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return `${what} does not exist`;
  if (code === "ENOTDIR") return `${what} is not a directory`;
  if (code === "EACCES" || code === "EPERM") return `${what} cannot be read (permission denied)`;
  return `${what} cannot be read (${error instanceof Error ? error.message : String(error)})`;
}
