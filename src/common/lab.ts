// The lab file format (one YAML file per lab) and the normalized Lab the server works with.
// docs/labs.md explains every field; docs/lab.schema.json is generated from LabFile (npm run schema:labs).
import { z } from "zod";
import { cidrContains, cidrOf, parseCidr, uncoveredRanges, type Cidr } from "./cidr.ts";
import { translatedLanguages, type Translations } from "./translations.ts";

/** Lab and check ids: they end up in VM names and label values, so RFC 1035 label rules, shorter. */
export const labIdPattern = /^[a-z]([a-z0-9-]*[a-z0-9])?$/;
const idRules = "lowercase letters, digits and '-', starting with a letter and not ending with '-'";

const Id = z
  .string()
  .max(40, { error: "must be at most 40 characters" })
  .regex(labIdPattern, { error: `must be ${idRules}` });

const TextValue = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: "must not be empty" })
    .max(max, { error: `must be at most ${max} characters` });

/**
 * Every text a person reads: one string for every language, or one per language with `en` required,
 * since English is what a missing language falls back to (and what the server's own messages use).
 */
function Localized<Value extends z.ZodType<string>>(value: Value) {
  return z.union(
    [
      value,
      z
        .strictObject({ en: value, ja: value.optional(), zh: value.optional() })
        .meta({ description: "One text per language; en is required, ja and zh fall back to it." }),
    ],
    {
      error: ({ input }) => {
        if (input === undefined) return "is required";
        if (input !== null && typeof input === "object" && !Array.isArray(input))
          return "needs en: the English text, which the other languages fall back to";
        const expected = "must be text, or one text per language like {en: …, ja: …, zh: …}";
        return input === null ? `${expected} (it is empty)` : expected;
      },
    },
  );
}
const Text = (max: number) => Localized(TextValue(max));

/** A localized text from a lab file as the plain (English) text and its other languages. */
export type LocalizedInput = string | ({ en: string } & Translations);

export function plainText(text: LocalizedInput): string {
  return typeof text === "string" ? text : text.en;
}

/** The Japanese and Chinese versions of a text; undefined when it has none. */
export function translationsOf(text: LocalizedInput | undefined): Translations | undefined {
  if (text === undefined || typeof text === "string") return undefined;
  const translations: Translations = {};
  for (const language of translatedLanguages) {
    const value = text[language];
    if (value !== undefined) translations[language] = value;
  }
  return Object.keys(translations).length > 0 ? translations : undefined;
}

/** What a lab's checks are worth together: the most its grade can be. */
export function labPoints(lab: { checks: readonly { points: number }[] }): number {
  return lab.checks.reduce((sum, check) => sum + check.points, 0);
}

/** A Kubernetes memory quantity in whole Mi or Gi, as KubeVirt's memory.guest takes it. */
export const memoryPattern = /^[1-9][0-9]{0,6}(Mi|Gi)$/;
const minMemoryMi = 128;
const maxMemoryMi = 256 * 1024;

export function memoryToMi(memory: string): number {
  const match = memoryPattern.exec(memory);
  if (!match) throw new Error(`not a memory quantity in Mi or Gi: ${memory}`);
  const amount = Number.parseInt(memory, 10);
  return match[1] === "Gi" ? amount * 1024 : amount;
}

const Memory = z
  .string()
  .regex(memoryPattern, { error: "must be a whole number of Mi or Gi, like 512Mi or 4Gi" })
  // Zod runs this even when the pattern failed; that case is already reported.
  .refine((memory) => !memoryPattern.test(memory) || isWithin(memoryToMi(memory), minMemoryMi, maxMemoryMi), {
    error: `must be between ${minMemoryMi}Mi and ${maxMemoryMi / 1024}Gi`,
  });

function isWithin(value: number, min: number, max: number): boolean {
  return value >= min && value <= max;
}

// A fully qualified reference (registry host first) so no node-specific short-name lookup decides
// which image a student gets. Linear to match: every repetition starts with a distinct separator.
const imagePattern =
  /^[a-z0-9.-]+(:[0-9]+)?(\/[a-z0-9._-]+)+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

const Vm = z
  .strictObject({
    size: z
      .string()
      .min(1)
      .max(40)
      .optional()
      .meta({ description: "A named size from the server config (small, medium, large by default)." }),
    cpu: z.int().min(1).max(64).optional().meta({ description: "vCPUs; give memory too, and no size." }),
    memory: Memory.optional().meta({ description: "Guest memory such as 4Gi; give cpu too, and no size." }),
    image: z
      .string()
      .max(512)
      .regex(imagePattern, {
        error: "must be a full image reference such as quay.io/containerdisks/fedora:41",
      })
      .meta({ description: "The containerDisk image the VM boots." }),
    nested: z
      .boolean()
      .default(false)
      .meta({ description: "Give the guest the host CPU model so it can run VMs itself (KVM inside)." }),
    cloudInit: z
      .string()
      .max(64 * 1024)
      .optional()
      .meta({ description: "A #cloud-config merged into the user data Lab Console generates." }),
  })
  .superRefine((vm, ctx) => {
    const hasSize = vm.size !== undefined;
    if (hasSize && (vm.cpu !== undefined || vm.memory !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["size"],
        message: "give either size or cpu and memory, not both",
      });
    } else if (!hasSize && (vm.cpu === undefined || vm.memory === undefined)) {
      ctx.addIssue({ code: "custom", path: [], message: "give either size or both cpu and memory" });
    }
  })
  .meta({
    // Zod cannot turn the refinement above into JSON Schema; say the same for editors here.
    oneOf: [
      { required: ["size"], not: { anyOf: [{ required: ["cpu"] }, { required: ["memory"] }] } },
      { required: ["cpu", "memory"], not: { required: ["size"] } },
    ],
  });

/** The most terminals a lab may give each session besides its serial console (the agent allows 8 in all). */
export const maxTerminals = 4;

export const idleActions = ["end", "pause"] as const;

/** The consoles a lab may offer: the VM's serial line, and its screen (KubeVirt's VNC). */
export const labConsoles = ["serial", "graphical"] as const;
export type LabConsole = (typeof labConsoles)[number];

/**
 * Idle handling (docs/operations.md, "Idle sessions"): no console input and nothing the agent sees
 * for `minutes` ends the session, or pauses its VM; a warning comes `warnMinutes` before.
 */
const Idle = z
  .strictObject({
    minutes: z.int().min(5).max(1440).meta({
      description: "Minutes without console input or activity the agent sees before the action.",
    }),
    warnMinutes: z.int().min(1).max(60).default(5).meta({
      description: "How long before the action the student is warned; less than minutes.",
    }),
    action: z.enum(idleActions).default("end").meta({
      description:
        "end: delete the VM, as at expiry; pause: pause the VM (KubeVirt's pause) until the student resumes it.",
    }),
  })
  .refine((idle) => idle.warnMinutes < idle.minutes, {
    error: "warnMinutes must be less than minutes",
    path: ["warnMinutes"],
  });
export type LabIdle = z.output<typeof Idle>;

const Session = z.strictObject({
  idle: Idle.optional().meta({ description: "Idle handling; none when absent." }),
  minutes: z.int().min(5).max(1440).default(60).meta({ description: "How long a session lasts." }),
  extendMinutes: z.int().min(1).max(1440).default(15).meta({ description: "Minutes one extension adds." }),
  maxExtensions: z.int().min(0).max(100).default(2).meta({ description: "How often a student may extend." }),
  terminals: z.int().min(0).max(maxTerminals).default(0).meta({
    description:
      "Shells a student may open besides the serial console, each a real terminal through the VM's agent.",
  }),
  consoles: z
    .array(z.enum(labConsoles))
    .min(1, { error: "must name at least one console" })
    .default(["serial"])
    .refine((consoles) => new Set(consoles).size === consoles.length, { error: "names a console twice" })
    .meta({
      description:
        "The consoles a session shows, a tab each: serial (the VM's serial line) and graphical (its screen, over VNC; the image needs a display, see docs/vnc.md).",
    }),
});

const LabCheckFile = z.strictObject({
  id: Id.meta({ description: "Unique within the lab; grading results refer to it." }),
  title: Text(200).meta({ description: "What the student has to do, in one line." }),
  points: z.int().min(0).max(1000).default(1).meta({ description: "Points for passing." }),
  run: z
    .string()
    .min(1, { error: "must not be empty" })
    .max(8 * 1024)
    .meta({ description: "A bash command run as the student in their home directory; exit 0 passes." }),
  timeoutSeconds: z
    .int()
    .min(1)
    .max(600)
    .default(10)
    .meta({ description: "A slower command fails the check." }),
  selfCheck: z.boolean().default(false).meta({ description: "Students may run this check themselves." }),
  hint: Text(2000).optional().meta({ description: "Shown to students when the check fails." }),
});

/**
 * Ranges no lab may open, on any cluster: what a VM reaches there is never a package mirror, and the
 * metadata endpoints hand out the node's cloud credentials. The cluster's own ranges (pods, services,
 * nodes) differ per cluster; the server refuses those with LAB_CLUSTER_CIDRS (parse-lab.ts).
 */
export const unreachableRanges: readonly { cidr: Cidr; why: string }[] = [
  { cidr: cidrOf("0.0.0.0/8"), why: '"this network"' },
  { cidr: cidrOf("127.0.0.0/8"), why: "loopback" },
  {
    cidr: cidrOf("169.254.0.0/16"),
    why: "link-local: the cloud metadata endpoint 169.254.169.254 hands out the node's cloud credentials",
  },
  { cidr: cidrOf("100.100.100.200/32"), why: "Alibaba Cloud's metadata endpoint" },
  { cidr: cidrOf("::1/128"), why: "loopback" },
  { cidr: cidrOf("::ffff:0:0/96"), why: "IPv4-mapped: the IPv4 ranges above in IPv6 spelling" },
  { cidr: cidrOf("fe80::/10"), why: "link-local" },
  { cidr: cidrOf("fd00:ec2::254/128"), why: "AWS's IPv6 metadata endpoint" },
];

const noHostNames = "NetworkPolicies know no host names: use the addresses the name resolves to";

/** A CIDR as the lab file writes it; null when it is no range (the problem is reported at `path`). */
function readCidr(text: string, ctx: z.RefinementCtx, path: (string | number)[]): Cidr | null {
  const parsed = parseCidr(text);
  if (parsed.ok) return parsed.cidr;
  ctx.addIssue({
    code: "custom",
    path,
    message:
      parsed.problem === "host-bits"
        ? `${text} has bits set after the prefix; the range is ${parsed.canonical}`
        : `must be an address range like 203.0.113.0/24 or 2001:db8::/48, not ${JSON.stringify(text)} (${noHostNames})`,
  });
  return null;
}

const portRange = { error: "must be a port from 1 to 65535" };
const portsRule = "a rule without ports would open every port";

const EgressRule = z
  .strictObject({
    cidr: z.string().max(64).meta({
      description: "Where the VM may connect: an IPv4 or IPv6 range such as 203.0.113.0/24 (no host names).",
    }),
    except: z
      .array(z.string().max(64))
      .max(20)
      .default([])
      .meta({ description: "Ranges inside cidr that stay closed." }),
    protocol: z
      .enum(["TCP", "UDP"], { error: "must be TCP or UDP" })
      .default("TCP")
      .meta({ description: "The protocol of every port of this rule." }),
    ports: z
      .array(z.int().min(1, portRange).max(65535, portRange), {
        error: (issue) =>
          issue.input === undefined
            ? `is required: list the ports, e.g. [80, 443] (${portsRule})`
            : undefined,
      })
      .min(1, { error: `list at least one port, e.g. [80, 443] (${portsRule})` })
      .max(20)
      .meta({ description: "The destination ports, 1-65535." }),
  })
  .superRefine((rule, ctx) => {
    const range = readCidr(rule.cidr, ctx, ["cidr"]);
    const excepts: Cidr[] = [];
    rule.except.forEach((text, index) => {
      const except = readCidr(text, ctx, ["except", index]);
      if (!except || !range) return;
      // The API server refuses an except that is not strictly inside cidr.
      if (!cidrContainsStrictly(range, except)) {
        ctx.addIssue({
          code: "custom",
          path: ["except", index],
          message: `${except.text} is not inside ${range.text}`,
        });
      } else excepts.push(except);
    });
    if (!range) return;
    const found = uncoveredRanges(range, excepts, unreachableRanges);
    if (found.kind === "inside") {
      ctx.addIssue({
        code: "custom",
        path: ["cidr"],
        message: `${range.text} is inside ${found.range.cidr.text} (${found.range.why}), which no lab may reach`,
      });
    } else if (found.kind === "uncovered") {
      const list = found.ranges.map((entry) => `${entry.cidr.text} (${entry.why})`).join(", ");
      ctx.addIssue({
        code: "custom",
        path: ["cidr"],
        message: `${range.text} includes addresses no lab may reach: ${list}; use a narrower range, or list them under except`,
      });
    }
  });

function cidrContainsStrictly(outer: Cidr, inner: Cidr): boolean {
  return outer.prefix < inner.prefix && cidrContains(outer, inner);
}

const Network = z.strictObject({
  egress: z.array(EgressRule).max(20).default([]).meta({
    description:
      "Connections the VM may open besides DNS, e.g. to a package mirror. Everything else stays closed.",
  }),
});

/** One egress rule as the server uses it: every default filled in, ranges canonical. */
export interface LabEgressRule {
  cidr: string;
  except: string[];
  protocol: "TCP" | "UDP";
  ports: number[];
}

export const LabFile = z
  .strictObject({
    id: Id.meta({ description: "Unique across the lab directory; part of every session's VM name." }),
    title: Text(200).meta({ description: "The lab's name as students see it." }),
    description: Localized(z.string().max(64 * 1024, { error: "must be at most 64 KiB" }))
      .default("")
      .meta({ description: "Markdown shown to students." }),
    vm: Vm,
    session: Session.default({
      minutes: 60,
      extendMinutes: 15,
      maxExtensions: 2,
      terminals: 0,
      consoles: ["serial"],
    }),
    network: Network.optional().meta({
      description: "What the VM may reach on the network; without it, DNS and nothing else.",
    }),
    checks: z.array(LabCheckFile).max(200).default([]).meta({ description: "What grading looks at." }),
  })
  .superRefine((lab, ctx) => {
    const firstIndexById = new Map<string, number>();
    lab.checks.forEach((check, index) => {
      const first = firstIndexById.get(check.id);
      if (first === undefined) firstIndexById.set(check.id, index);
      else
        ctx.addIssue({
          code: "custom",
          path: ["checks", index, "id"],
          message: `duplicate check id "${check.id}" (checks[${first}] has it too)`,
        });
    });
  })
  .meta({
    title: "Lab Console lab",
    description: "One lab: the VM students get and the checks that grade it.",
  });
export type LabFile = z.output<typeof LabFile>;

/**
 * A check as the server uses it. `title` and `hint` are the plain (English) texts, which the server's
 * own messages and exports use; `translations` holds the other languages the file gives.
 */
export interface LabCheck {
  id: string;
  title: string;
  points: number;
  run: string;
  timeoutSeconds: number;
  selfCheck: boolean;
  hint?: string;
  translations?: { title?: Translations; hint?: Translations };
}

/** A lab as the server uses it: the size resolved to cpu and memory, every default filled in. */
export interface Lab {
  id: string;
  title: string;
  description: string;
  vm: { cpu: number; memory: string; image: string; nested: boolean; cloudInit: string | null };
  session: {
    minutes: number;
    extendMinutes: number;
    maxExtensions: number;
    terminals: number;
    /** The consoles a session shows, in the lab file's order. */
    consoles: LabConsole[];
    /** Absent: the lab has no idle limit. */
    idle?: LabIdle;
  };
  checks: LabCheck[];
  /** Only for a lab that declares egress: each session's VM may open these besides DNS. */
  network?: { egress: LabEgressRule[] };
  /** Title and description in the other languages, where the file gives them. */
  translations?: { title?: Translations; description?: Translations };
}
