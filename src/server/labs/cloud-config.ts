// cloud-init user data as Lab Console builds it: several #cloud-config parts (ours, the lab's, the
// lab agent's) merged into one document, because a NoCloud disk carries exactly one user data.
import { stringify } from "yaml";
import { parseYaml, type YamlProblem } from "./yaml-source.ts";

export type CloudConfig = Record<string, unknown>;

/**
 * Keys whose lists add up across parts; every part may need files, commands or packages.
 * For any other key a later part replaces an earlier one.
 */
export const concatenatedKeys = ["bootcmd", "packages", "runcmd", "users", "write_files"] as const;

const header = "#cloud-config";

/** Reads one part. Problems carry lines within `text`. */
export function parseCloudConfig(
  text: string,
): { ok: true; config: CloudConfig } | { ok: false; problems: YamlProblem[] } {
  const parsed = parseYaml(text);
  if (!parsed.ok) return parsed;
  const { value, lineOf } = parsed.source;
  if (value === null) return { ok: true, config: {} };
  if (!isPlainObject(value)) {
    return {
      ok: false,
      problems: [
        { line: 1, message: `must be a ${header} mapping (shell scripts are not supported: use runcmd)` },
      ],
    };
  }
  const problems = concatenatedKeys
    .filter((key) => value[key] !== undefined && value[key] !== null && !Array.isArray(value[key]))
    .map((key) => ({ line: lineOf([key]), message: `${key} must be a list` }));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config: value };
}

/** Merges parts in order: concatenatedKeys lists are joined, any other key is taken from the last part that sets it. */
export function mergeCloudConfigs(parts: readonly CloudConfig[]): CloudConfig {
  // A Map, not an object: a "__proto__" key from someone's YAML must stay a plain key.
  const merged = new Map<string, unknown>();
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (value === null || value === undefined) continue;
      const previous = merged.get(key);
      const joins = (concatenatedKeys as readonly string[]).includes(key);
      merged.set(
        key,
        joins && Array.isArray(previous) && Array.isArray(value) ? [...previous, ...value] : value,
      );
    }
  }
  return Object.fromEntries(merged);
}

export function renderCloudConfig(config: CloudConfig): string {
  // lineWidth 0: never fold long commands, so the user data reads exactly as written.
  return `${header}\n${stringify(config, { lineWidth: 0 })}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
