// Cluster settings from `--config FILE` (YAML): the Kubernetes and KubeVirt versions, both sides'
// feature gates, the nodes, container disk images the guests should know, and what each guest may
// take of the host. They let preflight
// checks run against real-world version triads, e.g. KubeVirt v1.9 (ImageVolume on by default) on
// Kubernetes 1.34 (ImageVolume off), and which of the API server's optional admission plugins are off.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { parseMillicores, parseQuantity } from "../../common/quantity.ts";

/**
 * What each guest may take when the config's guestLimits leaves a setting out, and what the
 * emulator's guests get without a config (guests/cgroups/guest-limits.ts): the one place they are set.
 */
export const defaultGuestLimitSettings = { pids: 512, disk: "1Gi", memory: "1Gi" } as const;

const quantity = z
  .union([z.string(), z.number()])
  .refine((value) => parseQuantity(value) !== undefined, {
    message: "must be a quantity like 32, 500m or 128Gi",
  })
  .transform(String);

const versionPattern = /^v[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$/;

/** Admission plugins the emulator runs that a cluster may leave off (kube-apiserver --disable-admission-plugins). */
export const optionalAdmissionPlugins = ["OwnerReferencesPermissionEnforcement"] as const;

const kubernetesGate = z.union([
  z.boolean(),
  z.object({ enabled: z.boolean(), stage: z.enum(["ALPHA", "BETA", "", "DEPRECATED"]).optional() }),
]);

const nodeSchema = z.object({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: "must be a lowercase RFC 1123 subdomain",
  }),
  cpu: quantity.default("32"),
  memory: quantity.default("128Gi"),
  pods: z.number().int().positive().default(110),
  /** Whether KubeVirt's device plugin exposes devices.kubevirt.io/kvm on the node. */
  kvm: z.boolean().default(true),
  containerRuntime: z.string().default("containerd://2.1.4"),
  labels: z.record(z.string(), z.string()).default({}),
});

/**
 * A container disk image and the commands it ships (guests/boot/images.ts knows four stock images; anything
 * else gets a conservative default). Lets a test make, e.g., an image without python3.
 */
const imageSchema = z.object({
  image: z.string().min(1),
  commands: z.array(z.string().regex(/^[^/\s]+$/, { message: "must be a command name, not a path" })),
  packageManager: z.enum(["dnf", "apt", "none"]).default("none"),
});

const mebibyte = 2 ** 20;
const atLeastOneMebibyte = (value: string) => (parseQuantity(value) ?? 0) >= mebibyte;

/**
 * The limits of each guest beyond its VMI's own memory and vCPUs (guests/cgroups/guest-limits.ts): processes
 * and threads at once, the disk, and the memory of a VMI that names none.
 */
const guestLimitsSchema = z.object({
  pids: z.number().int().min(32).default(defaultGuestLimitSettings.pids),
  disk: quantity
    .refine(atLeastOneMebibyte, { message: "must be at least 1Mi" })
    .default(defaultGuestLimitSettings.disk),
  memory: quantity
    .refine(atLeastOneMebibyte, { message: "must be at least 1Mi" })
    .default(defaultGuestLimitSettings.memory),
});

/**
 * A validating webhook of the cluster's own (a policy engine such as Kyverno or Gatekeeper) that
 * refuses every write of a resource it matches: the API server answers 422 in its words.
 */
export const PolicyWebhookSchema = z.object({
  name: z.string().min(1),
  resource: z.string().regex(/^[a-z]+$/, { message: "must be a resource's plural, e.g. virtualmachines" }),
  operations: z.array(z.enum(["CREATE", "UPDATE"])).min(1),
  message: z.string().min(1),
});

export type PolicyWebhook = z.infer<typeof PolicyWebhookSchema>;

export const ClusterConfigSchema = z
  .object({
    kubernetes: z
      .object({
        version: z.string().regex(versionPattern, { message: "must look like v1.34.1" }).default("v1.34.1"),
        featureGates: z.record(z.string(), kubernetesGate).default({}),
        // On by default, as in OpenShift and CIS-hardened clusters: the strictest of the clusters
        // Lab Console must run on.
        disableAdmissionPlugins: z.array(z.enum(optionalAdmissionPlugins)).default([]),
      })
      .default({ version: "v1.34.1", featureGates: {}, disableAdmissionPlugins: [] }),
    kubevirt: z
      .object({
        version: z.string().regex(versionPattern, { message: "must look like v1.9.0" }).default("v1.9.0"),
        featureGates: z.array(z.string()).default([]),
        // Left out: ImageVolume disabled, as the field fixed its cluster, so that KubeVirt 1.9 on
        // Kubernetes 1.34 starts VMs. docs/examples/imagevolume-trap.cluster.yaml sets [] for the trap.
        disabledFeatureGates: z.array(z.string()).optional(),
        cpuAllocationRatio: z.number().int().positive().default(10),
      })
      .default({ version: "v1.9.0", featureGates: [], cpuAllocationRatio: 10 })
      .transform(({ disabledFeatureGates, ...kubevirt }) => ({
        ...kubevirt,
        disabledFeatureGates:
          disabledFeatureGates ?? (kubevirt.featureGates.includes("ImageVolume") ? [] : ["ImageVolume"]),
      })),
    nodes: z
      .array(nodeSchema)
      .min(1)
      .default(["node01", "node02", "node03"].map((name) => nodeSchema.parse({ name }))),
    images: z.array(imageSchema).default([]),
    guestLimits: guestLimitsSchema.default({ ...defaultGuestLimitSettings }),
    policyWebhooks: z.array(PolicyWebhookSchema).default([]),
  })
  .superRefine((config, context) => {
    const names = config.nodes.map((node) => node.name);
    const duplicate = names.find((name, index) => names.indexOf(name) !== index);
    if (duplicate)
      context.addIssue({ code: "custom", path: ["nodes"], message: `node "${duplicate}" is listed twice` });
    const both = config.kubevirt.featureGates.filter((gate) =>
      config.kubevirt.disabledFeatureGates.includes(gate),
    );
    if (both.length > 0) {
      context.addIssue({
        code: "custom",
        path: ["kubevirt", "disabledFeatureGates"],
        message: `${both.join(", ")} cannot be both enabled and disabled`,
      });
    }
    config.nodes.forEach((node, index) => {
      if ((parseMillicores(node.cpu) ?? 0) <= 0) {
        context.addIssue({
          code: "custom",
          path: ["nodes", index, "cpu"],
          message: "must be more than zero",
        });
      }
    });
  });

export type ClusterConfig = z.infer<typeof ClusterConfigSchema>;
export type NodeConfig = ClusterConfig["nodes"][number];
/** What callers may leave out: everything has a default. */
export type ClusterConfigInput = z.input<typeof ClusterConfigSchema>;

export function defaultClusterConfig(): ClusterConfig {
  return ClusterConfigSchema.parse({});
}

export function parseClusterConfig(input: unknown, source = "cluster config"): ClusterConfig {
  const result = ClusterConfigSchema.safeParse(input ?? {});
  if (!result.success) throw new Error(`${source} is invalid:\n${z.prettifyError(result.error)}`);
  return result.data;
}

export function loadClusterConfig(path: string): ClusterConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`cannot read cluster config ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new Error(`cluster config ${path} is not valid YAML: ${(error as Error).message}`);
  }
  return parseClusterConfig(parsed, `cluster config ${path}`);
}

// Stage and default of Kubernetes gates the emulator knows about; others come only from the config.
const knownKubernetesGates: Record<string, { stage: string; enabledFrom?: number }> = {
  ImageVolume: { stage: "BETA", enabledFrom: 35 },
};

export interface KubernetesGate {
  name: string;
  stage: string;
  enabled: boolean;
}

/** The gates the API server reports in kubernetes_feature_enabled, defaults merged with the config. */
export function kubernetesFeatureGates(config: ClusterConfig): KubernetesGate[] {
  const minor = Number(/^v[0-9]+\.([0-9]+)/.exec(config.kubernetes.version)?.[1] ?? "0");
  const gates = new Map<string, KubernetesGate>();
  for (const [name, known] of Object.entries(knownKubernetesGates)) {
    gates.set(name, {
      name,
      stage: known.stage,
      enabled: known.enabledFrom !== undefined && minor >= known.enabledFrom,
    });
  }
  for (const [name, setting] of Object.entries(config.kubernetes.featureGates)) {
    const stage =
      typeof setting === "object" && setting.stage !== undefined
        ? setting.stage
        : (gates.get(name)?.stage ?? "");
    const enabled = typeof setting === "boolean" ? setting : setting.enabled;
    gates.set(name, { name, stage, enabled });
  }
  return [...gates.values()].sort((a, b) => a.name.localeCompare(b.name));
}
