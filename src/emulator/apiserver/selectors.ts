// Label and field selectors with the API server's syntax and error messages.
import { field, type KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";
import { badRequest } from "../http/status.ts";

type Requirement =
  { key: string; op: "in" | "notin"; values: string[] } | { key: string; op: "exists" | "!exists" };

export type LabelSelector = Requirement[];

const labelKeyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== "");
}

function checkKey(key: string, selector: string): string {
  if (!labelKeyPattern.test(key)) {
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
  }
  return key;
}

export function parseLabelSelector(text: string | null): LabelSelector {
  if (!text) return [];
  return splitTopLevel(text).map((term): Requirement => {
    const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
    if (set) {
      const values = (set[3] ?? "")
        .split(",")
        .map((value) => value.trim())
        .filter((value) => value !== "");
      return { key: checkKey(set[1] ?? "", text), op: set[2] as "in" | "notin", values };
    }
    const equality = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    if (equality) {
      const key = checkKey(equality[1] ?? "", text);
      const value = equality[3] ?? "";
      return { key, op: equality[2] === "!=" ? "notin" : "in", values: [value] };
    }
    if (term.startsWith("!")) return { key: checkKey(term.slice(1).trim(), text), op: "!exists" };
    return { key: checkKey(term, text), op: "exists" };
  });
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return selector.every((requirement) => {
    const value = labels?.[requirement.key];
    switch (requirement.op) {
      case "exists":
        return value !== undefined;
      case "!exists":
        return value === undefined;
      case "in":
        return value !== undefined && requirement.values.includes(value);
      case "notin":
        return value === undefined || !requirement.values.includes(value);
    }
  });
}

export interface FieldRequirement {
  path: string;
  value: string;
  equal: boolean;
}

export type FieldSelector = FieldRequirement[];

export function parseFieldSelector(text: string | null, resource: ResourceType): FieldSelector {
  if (!text) return [];
  const supported = ["metadata.name", "metadata.namespace", ...resource.fieldSelectors];
  return text
    .split(",")
    .map((term) => term.trim())
    .filter((term) => term !== "")
    .map((term) => {
      const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
      if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
      const path = match[1] ?? "";
      if (!supported.includes(path)) {
        throw badRequest(`field label not supported: ${path}`);
      }
      return { path, value: match[3] ?? "", equal: match[2] !== "!=" };
    });
}

function fieldValue(object: KubeObject, path: string): string {
  if (path === "source") {
    const component = field(object, "source", "component");
    return typeof component === "string" ? component : "";
  }
  const value = field(object, ...path.split("."));
  return value === undefined || value === null ? "" : String(value);
}

export function matchesFields(selector: FieldSelector, object: KubeObject): boolean {
  return selector.every(
    (requirement) => (fieldValue(object, requirement.path) === requirement.value) === requirement.equal,
  );
}
