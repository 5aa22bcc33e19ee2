// Turns the text of one lab file into a Lab, or into problems that each name a line and a field.
import { Scalar, isScalar } from "yaml";
import type { z } from "zod";
import { parseCidr, uncoveredRanges, type Cidr } from "../../common/cidr.ts";
import {
  LabFile,
  type LabEgressRule,
  plainText,
  translationsOf,
  type Lab,
  type LabCheck,
} from "../../common/lab.ts";
import type { Translations } from "../../common/translations.ts";
import { parseCloudConfig } from "./cloud-config.ts";
import type { VmSizes } from "./load-labs.ts";
import { parseYaml, type YamlPath, type YamlProblem, type YamlSource } from "./yaml-source.ts";

export type ParsedLab =
  { ok: true; lab: Lab; idLine: number | null } | { ok: false; problems: YamlProblem[] };

/**
 * The address ranges private networks use (RFC 1918, carrier-grade NAT, IPv6 unique local): a
 * cluster's pods, services and nodes live in them nearly everywhere. LAB_CLUSTER_CIDRS names the
 * real ones, which frees the rest of private space for mirrors on a campus network.
 */
export const defaultClusterCidrs: readonly string[] = [
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
  "fc00::/7",
];

export interface LabRules {
  /** No lab's egress may include these (LAB_CLUSTER_CIDRS): the cluster's own pods, services and nodes. */
  clusterCidrs?: readonly string[];
}

export function parseLab(text: string, sizes: VmSizes, rules: LabRules = {}): ParsedLab {
  const parsed = parseYaml(text);
  if (!parsed.ok) return parsed;
  const { source } = parsed;
  if (source.value === null) return { ok: false, problems: [{ line: null, message: "the file is empty" }] };

  const result = LabFile.safeParse(source.value, { error: describeTypeMismatch });
  if (!result.success) {
    return {
      ok: false,
      problems: sortByLine(result.error.issues.flatMap((issue) => describe(issue, source))),
    };
  }

  const file = result.data;
  const problems: YamlProblem[] = [];
  const problemAt = (path: YamlPath, message: string) =>
    problems.push({ line: source.lineOf(path), message: `${formatPath(path)}: ${message}` });

  const sizeName = file.vm.size;
  const size = sizeName !== undefined && Object.hasOwn(sizes, sizeName) ? sizes[sizeName] : undefined;
  if (sizeName !== undefined && !size) {
    problemAt(["vm", "size"], `unknown size "${sizeName}" (sizes here: ${Object.keys(sizes).join(", ")})`);
  }

  if (file.vm.cloudInit !== undefined) {
    const cloudInit = parseCloudConfig(file.vm.cloudInit);
    if (!cloudInit.ok) {
      const firstLine = firstContentLine(source, ["vm", "cloudInit"]);
      for (const problem of cloudInit.problems) {
        const line = firstLine !== null && problem.line !== null ? firstLine + problem.line - 1 : null;
        problems.push({
          line: line ?? source.lineOf(["vm", "cloudInit"]),
          message: `vm.cloudInit: ${problem.message}`,
        });
      }
    }
  }

  const egress = (file.network?.egress ?? []).map((rule, index): LabEgressRule => {
    const range = canonical(rule.cidr);
    const except = rule.except.map(canonical);
    const problem = clusterRangeProblem(range, except, rules.clusterCidrs ?? defaultClusterCidrs);
    if (problem) problemAt(["network", "egress", index, "cidr"], problem);
    return {
      cidr: range.text,
      except: except.map((cidr) => cidr.text),
      protocol: rule.protocol,
      ports: rule.ports,
    };
  });

  const cpu = size?.cpu ?? file.vm.cpu;
  const memory = size?.memory ?? file.vm.memory;
  if (problems.length > 0 || cpu === undefined || memory === undefined) {
    return { ok: false, problems: sortByLine(problems) };
  }

  const labTranslations = translatedFields({
    title: translationsOf(file.title),
    description: translationsOf(file.description),
  });
  const lab: Lab = {
    id: file.id,
    title: plainText(file.title),
    description: plainText(file.description),
    vm: { cpu, memory, image: file.vm.image, nested: file.vm.nested, cloudInit: file.vm.cloudInit ?? null },
    session: file.session,
    checks: file.checks.map(({ title, hint, ...check }): LabCheck => {
      const translations = translatedFields({ title: translationsOf(title), hint: translationsOf(hint) });
      return {
        ...check,
        title: plainText(title),
        ...(hint !== undefined && { hint: plainText(hint) }),
        ...(translations && { translations }),
      };
    }),
    ...(egress.length > 0 && { network: { egress } }),
    ...(labTranslations && { translations: labTranslations }),
  };
  return { ok: true, lab, idLine: source.lineOf(["id"]) };
}

/** A range the schema already accepted. */
function canonical(text: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed.ok) throw new Error(`the lab schema let an invalid range through: ${text}`);
  return parsed.cidr;
}

/** Why `range` (without `except`) may not be opened on this cluster, or null. */
function clusterRangeProblem(range: Cidr, except: Cidr[], clusterCidrs: readonly string[]): string | null {
  const cluster = clusterCidrs.map((text) => ({ cidr: canonical(text) }));
  const found = uncoveredRanges(range, except, cluster);
  const reach = "the VM would reach the console, the API server and other students' VMs";
  if (found.kind === "inside") {
    return (
      `${range.text} is inside ${found.range.cidr.text}, which this server takes for the cluster's own ` +
      `addresses (LAB_CLUSTER_CIDRS): ${reach}. If the range is outside the cluster, set ` +
      "LAB_CLUSTER_CIDRS to the cluster's own pod, service and node ranges"
    );
  }
  if (found.kind === "uncovered") {
    const list = found.ranges.map((entry) => entry.cidr.text).join(", ");
    return (
      `${range.text} includes the cluster's own addresses ${list} (LAB_CLUSTER_CIDRS): ${reach}; ` +
      "use a narrower range, or list them under except"
    );
  }
  return null;
}

/** The fields that have translations, or undefined when none has: a lab in one language carries none. */
function translatedFields<Field extends string>(
  byField: Record<Field, Translations | undefined>,
): Partial<Record<Field, Translations>> | undefined {
  const found = Object.entries<Translations | undefined>(byField).filter((entry) => entry[1] !== undefined);
  return found.length > 0 ? (Object.fromEntries(found) as Partial<Record<Field, Translations>>) : undefined;
}

function describe(issue: z.core.$ZodIssue, source: YamlSource): YamlProblem[] {
  if (issue.code === "unrecognized_keys") {
    // One problem per key, on the key's own line: that is where the typo is.
    return issue.keys.map((key) => {
      const path = [...issue.path, key];
      return { line: source.lineOf(path), message: `${formatPath(path)}: unknown field` };
    });
  }
  const where = formatPath(issue.path);
  return [{ line: source.lineOf(issue.path), message: where ? `${where}: ${issue.message}` : issue.message }];
}

/**
 * Type mismatches in the words of someone writing YAML: the classic is `nested: yes`, which YAML 1.2
 * reads as the text "yes", not as true.
 */
function describeTypeMismatch(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== "invalid_type") return undefined;
  if (issue.input === undefined) return "is required";
  const wanted: Record<string, string> = {
    boolean: "must be true or false",
    number: "must be a number",
    string: "must be text",
    object: "must be a mapping of fields",
    array: "must be a list",
  };
  const expectation = wanted[issue.expected] ?? `must be ${issue.expected}`;
  return issue.input === null
    ? `${expectation} (it is empty)`
    : `${expectation}, not ${describeValue(issue.input)}`;
}

function describeValue(value: unknown): string {
  if (typeof value === "string")
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

/** checks[0].id, vm.size: the way the docs name fields. */
export function formatPath(path: YamlPath): string {
  return path
    .map((segment, index) =>
      typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`,
    )
    .join("");
}

/** The file line of the first line of a literal block scalar's text (`key: |`), else null. */
function firstContentLine(source: YamlSource, path: YamlPath): number | null {
  const node = source.nodeAt(path);
  if (!isScalar(node) || node.type !== Scalar.BLOCK_LITERAL || !node.range) return null;
  return source.lineAt(node.range[0]) + 1;
}

function sortByLine(problems: YamlProblem[]): YamlProblem[] {
  return problems.toSorted((a, b) => (a.line ?? 0) - (b.line ?? 0));
}
