// The BFF's whole configuration, read from the environment once at start-up. Every bad value is
// reported in one go so an operator fixes them all in one round instead of one per restart.
import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { cidrOf, parseAddressOrRange, parseCidr } from "../common/cidr.ts";
import { memoryPattern } from "../common/lab.ts";
import type { OidcSettings } from "./auth/oidc/oidc-authenticator.ts";
import { readOidcSettings } from "./auth/oidc/oidc-config.ts";
import type { SessionQuotas } from "./capacity/launch-admission.ts";
import type { CoordinationSettings } from "./replicas/from-config.ts";
import type { TrustedProxies } from "./http/client-address.ts";
import { defaultServerLimits, type ServerLimits } from "./http/server-limits.ts";
import { defaultVmSizes, type VmSizes } from "./labs/load-labs.ts";
import { defaultClusterCidrs } from "./labs/parse-lab.ts";
import type { SessionsReadMode } from "./sessions/reads.ts";

export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Where the cluster comes from. Only an explicit choice counts as "a cluster is configured". */
export type ClusterSource =
  | { kind: "kubeconfig"; path: string }
  | { kind: "in-cluster" }
  | { kind: "embedded-emulator"; kubeconfigPath: string; timing: EmulatorTiming; guests: EmulatorGuests };

export type EmulatorTiming = "realistic" | "fast";
/** What runs in the embedded emulator's VMs: sandboxed emulated guests, or a real Linux under QEMU. */
export type EmulatorGuests = "sandbox" | "qemu";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  labsDir: string;
  namespace: string;
  authMode: "demo" | "oidc";
  /** Set exactly when authMode is "oidc" (docs/auth.md). */
  oidc: OidcSettings | undefined;
  /** PostgreSQL for grading results and the audit log; undefined: SQLite files in dataDir (docs/database.md). */
  databaseUrl: string | undefined;
  usersFile: string;
  /** Undefined: generated once and kept in the data folder (see auth/secret.ts). */
  sessionSecret: string | undefined;
  /**
   * AGENT_TOKEN_SECRET (named so since the agent took bearer tokens): lab agents' keys derive
   * from it. Undefined: generated once and kept in the data folder.
   */
  agentKeySecret: string | undefined;
  /** Origins besides the BFF's own that may send mutations (e.g. a dev server on another port). */
  allowedOrigins: string[];
  /** PUBLIC_URL: the address people open. Requests for any other name (but loopback) are refused. */
  publicUrl: string | undefined;
  /**
   * TRUST_PROXY: how many proxies stand in front, or their addresses; their X-Forwarded-For, -Proto
   * and -Host are believed. Undefined: no proxy, every X-Forwarded-* header is ignored.
   */
  trustProxy: TrustedProxies | undefined;
  /** Timeouts and connection caps (LAB_*_TIMEOUT_SECONDS, LAB_MAX_CONNECTIONS*; docs/deploy.md). */
  serverLimits: ServerLimits;
  cluster: ClusterSource;
  vmSizes: VmSizes;
  /** LAB_CLUSTER_CIDRS: the cluster's pod, service and node ranges, which no lab's egress may include. */
  clusterCidrs: string[];
  /** "direct" lists from the cluster on every read: the naive mode the dashboard bench compares against. */
  sessionsReadMode: SessionsReadMode;
  quotas: SessionQuotas;
  /** The bearer token /metrics asks for; undefined turns /metrics off. */
  metricsToken: string | undefined;
  /** Console recordings in dataDir/recordings: the size cap per session and how long they are kept. */
  recordings: { maxBytes: number; retentionMs: number };
  /** How replicas share the reaper, the grading worker and consoles (docs/scaling.md). */
  coordination: CoordinationSettings;
  /**
   * LTI 1.3 (docs/lti.md): LTI_PLATFORMS_FILE names the LMSs trusted for launches, and
   * LTI_DYNAMIC_REGISTRATION=on lets an LMS register itself (pending an instructor's approval).
   * Undefined: off. Needs PUBLIC_URL, which every LMS is given as this console's address.
   */
  lti: { platformsFile: string | undefined; dynamicRegistration: boolean; publicUrl: URL } | undefined;
  logLevel: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
  }
}

const rfc1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const origin = z.string().refine((value) => {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}, "each entry must be an origin like https://lab.example.edu (scheme, host, optional port; no path)");

const vmSizesJson = z
  .string()
  .transform((text, context) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      context.addIssue({ code: "custom", message: "must be JSON" });
      return z.NEVER;
    }
  })
  .pipe(
    z.record(
      z.string().regex(rfc1123Label),
      z.object({
        cpu: z.number().int().min(1).max(64),
        memory: z.string().regex(memoryPattern, "must be a whole number of Mi or Gi, like 4Gi"),
      }),
    ),
  );

const cidrList = z
  .string()
  .transform((text) =>
    text
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ""),
  )
  .superRefine((entries, context) => {
    const bad = entries.flatMap((entry) => {
      const parsed = parseCidr(entry);
      if (parsed.ok) return [];
      return [parsed.problem === "host-bits" ? `${entry} (did you mean ${parsed.canonical}?)` : entry];
    });
    if (bad.length > 0)
      context.addIssue({
        code: "custom",
        message: `each entry must be a range like 10.244.0.0/16: ${bad.join(", ")}`,
      });
  });

const trustProxyAdvice =
  "write how many proxies stand in front of the console (TRUST_PROXY=1 for one Ingress or load " +
  "balancer) or their addresses and ranges, comma-separated (TRUST_PROXY=10.0.0.0/8 or " +
  "TRUST_PROXY=10.42.0.7,10.42.0.8); leave it unset when clients reach the console directly";

// Never "anything": trusting every peer lets any client write its own address into X-Forwarded-For
// and be counted, limited and audited as whoever it names, so true, yes and a range of every address
// are refused with what to write.
const trustProxy = z.string().transform((text, context): TrustedProxies => {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1) return { kind: "hops", hops };
    context.addIssue({ code: "custom", message: `"${value}" would count no proxy; ${trustProxyAdvice}` });
    return z.NEVER;
  }
  const addresses = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  for (const entry of addresses) {
    const problem = trustedEntryProblem(entry);
    if (problem) context.addIssue({ code: "custom", message: problem });
  }
  if (addresses.length === 0) context.addIssue({ code: "custom", message: trustProxyAdvice });
  return { kind: "addresses", addresses };
});

/** Why one TRUST_PROXY entry is refused, or undefined when it names proxies. */
function trustedEntryProblem(entry: string): string | undefined {
  const parsed = parseAddressOrRange(entry);
  if (!parsed.ok && parsed.problem === "syntax") {
    return `"${entry}" is not a number of proxies, an IP address or a CIDR range; ${trustProxyAdvice}`;
  }
  const range = parsed.ok ? parsed.cidr : cidrOf(parsed.canonical);
  if (range.prefix === 0) return `"${entry}" would trust every address; ${trustProxyAdvice}`;
  if (parsed.ok) return undefined;
  // 10.0.0.1/8 is one proxy's address given a prefix, or a range misspelt: masking the host bits
  // would trust a whole network where the operator may have meant one host, so ask which.
  const address = entry.slice(0, entry.indexOf("/"));
  return (
    `"${entry}" has bits set after the prefix: write ${range.text} to trust the whole range, ` +
    `or ${address} for that one proxy`
  );
}

const seconds = z.coerce.number().positive("must be a number of seconds above 0");
const connections = z.coerce.number().int("must be a whole number").min(1);

const EnvSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().min(1).default(".lab"),
  LABS_DIR: z.string().min(1).default("labs"),
  LAB_NAMESPACE: z
    .string()
    .max(63)
    .regex(rfc1123Label, "must be a Kubernetes namespace name (lower-case letters, digits, '-')")
    .default("lab-sessions"),
  AUTH_MODE: z.enum(["demo", "oidc"]).optional(),
  DATABASE_URL: z
    .string()
    .refine(
      (text) => URL.canParse(text) && ["postgres:", "postgresql:"].includes(new URL(text).protocol),
      "must be a PostgreSQL URL like postgres://user:password@db.example:5432/lab_console",
    )
    .optional(),
  LAB_USERS_FILE: z.string().min(1).optional(),
  SESSION_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  AGENT_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  LAB_ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((text) =>
      text
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ""),
    )
    .pipe(z.array(origin)),
  TRUST_PROXY: trustProxy.optional(),
  LAB_REQUEST_TIMEOUT_SECONDS: seconds.default(defaultServerLimits.requestTimeoutMs / 1000),
  LAB_HEADERS_TIMEOUT_SECONDS: seconds.default(defaultServerLimits.headersTimeoutMs / 1000),
  LAB_KEEP_ALIVE_TIMEOUT_SECONDS: seconds.default(defaultServerLimits.keepAliveTimeoutMs / 1000),
  LAB_IDLE_TIMEOUT_SECONDS: seconds.default(defaultServerLimits.idleTimeoutMs / 1000),
  LAB_MAX_CONNECTIONS: connections.default(defaultServerLimits.maxConnections),
  LAB_MAX_CONNECTIONS_PER_ADDRESS: connections.default(defaultServerLimits.maxConnectionsPerAddress),
  PUBLIC_URL: z.url().optional(),
  LAB_KUBECONFIG: z.string().min(1).optional(),
  KUBECONFIG: z.string().min(1).optional(),
  LAB_EMULATOR_TIMING: z.enum(["realistic", "fast"]).default("realistic"),
  LAB_EMULATOR_GUESTS: z.enum(["sandbox", "qemu"]).default("sandbox"),
  LAB_VM_SIZES: vmSizesJson.optional(),
  LAB_CLUSTER_CIDRS: cidrList.optional(),
  LAB_SESSIONS_READ_MODE: z.enum(["cache", "direct"]).default("cache"),
  LAB_MAX_SESSIONS_PER_STUDENT: z.coerce.number().int().min(1).default(1),
  LAB_MAX_SESSIONS_PER_LAB: z.coerce.number().int().min(1).optional(),
  LAB_MAX_SESSIONS: z.coerce.number().int().min(1).optional(),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  LAB_RECORDING_MAX_MB: z.coerce.number().min(1).default(16),
  LAB_RECORDING_RETENTION_DAYS: z.coerce.number().min(1).default(30),
  LAB_COORDINATION: z.enum(["leases", "off"]).default("leases"),
  LAB_LEASE_NAMESPACE: z
    .string()
    .max(63)
    .regex(rfc1123Label, "must be a Kubernetes namespace name (lower-case letters, digits, '-')")
    .optional(),
  LAB_LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).max(300).default(15),
  POD_NAMESPACE: z.string().min(1).optional(),
  POD_NAME: z.string().min(1).optional(),
  POD_IP: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LTI_PLATFORMS_FILE: z.string().min(1).optional(),
  LTI_DYNAMIC_REGISTRATION: z.enum(["on", "off"]).default("off"),
});

export interface Environment {
  env: Record<string, string | undefined>;
  /** True inside a pod with a mounted service account token. */
  inCluster: boolean;
}

export function detectInCluster(env: Record<string, string | undefined>): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync(path.join(serviceAccountDir, "token"));
}

export function loadConfig({ env, inCluster }: Environment): Config {
  // Empty variables count as unset: `FOO= npm start` should not mean "FOO is the empty string".
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ""),
  );
  const parsed = EnvSchema.safeParse(present);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`);
  problems.push(...crossFieldProblems(present, inCluster));
  const oidc = present.AUTH_MODE === "oidc" ? readOidcSettings(present) : undefined;
  problems.push(...(oidc?.problems ?? []));
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);

  const values = parsed.data;
  const dataDir = path.resolve(values.DATA_DIR);
  return {
    host: values.HOST,
    port: values.PORT,
    dataDir,
    labsDir: path.resolve(values.LABS_DIR),
    namespace: values.LAB_NAMESPACE,
    authMode: values.AUTH_MODE ?? "demo",
    oidc: oidc?.settings,
    databaseUrl: values.DATABASE_URL,
    usersFile: path.resolve(values.LAB_USERS_FILE ?? path.join(dataDir, "users.json")),
    sessionSecret: values.SESSION_SECRET,
    agentKeySecret: values.AGENT_TOKEN_SECRET,
    allowedOrigins: values.LAB_ALLOWED_ORIGINS,
    publicUrl: values.PUBLIC_URL,
    trustProxy: values.TRUST_PROXY,
    serverLimits: {
      requestTimeoutMs: Math.round(values.LAB_REQUEST_TIMEOUT_SECONDS * 1000),
      // Unset, it follows a shorter request timeout down: the headers are part of the request.
      headersTimeoutMs: Math.round(
        Math.min(
          values.LAB_HEADERS_TIMEOUT_SECONDS,
          present.LAB_HEADERS_TIMEOUT_SECONDS === undefined ? values.LAB_REQUEST_TIMEOUT_SECONDS : Infinity,
        ) * 1000,
      ),
      keepAliveTimeoutMs: Math.round(values.LAB_KEEP_ALIVE_TIMEOUT_SECONDS * 1000),
      idleTimeoutMs: Math.round(values.LAB_IDLE_TIMEOUT_SECONDS * 1000),
      maxConnections: values.LAB_MAX_CONNECTIONS,
      maxConnectionsPerAddress: values.LAB_MAX_CONNECTIONS_PER_ADDRESS,
    },
    cluster: chooseCluster(values, dataDir, inCluster),
    vmSizes: values.LAB_VM_SIZES ?? defaultVmSizes,
    clusterCidrs: values.LAB_CLUSTER_CIDRS ?? [...defaultClusterCidrs],
    sessionsReadMode: values.LAB_SESSIONS_READ_MODE,
    quotas: {
      perStudent: values.LAB_MAX_SESSIONS_PER_STUDENT,
      perLab: values.LAB_MAX_SESSIONS_PER_LAB ?? null,
      total: values.LAB_MAX_SESSIONS ?? null,
    },
    metricsToken: values.METRICS_TOKEN,
    recordings: {
      maxBytes: Math.round(values.LAB_RECORDING_MAX_MB * 1024 * 1024),
      retentionMs: values.LAB_RECORDING_RETENTION_DAYS * 24 * 3_600_000,
    },
    coordination: {
      mode: values.LAB_COORDINATION,
      namespace: values.LAB_LEASE_NAMESPACE ?? values.POD_NAMESPACE ?? "lab-console",
      leaseDurationSeconds: values.LAB_LEASE_DURATION_SECONDS,
      podName: values.POD_NAME,
      podIp: values.POD_IP,
    },
    logLevel: values.LOG_LEVEL,
    lti:
      values.LTI_PLATFORMS_FILE !== undefined || values.LTI_DYNAMIC_REGISTRATION === "on"
        ? {
            platformsFile: values.LTI_PLATFORMS_FILE && path.resolve(values.LTI_PLATFORMS_FILE),
            dynamicRegistration: values.LTI_DYNAMIC_REGISTRATION === "on",
            // Required with LTI by crossFieldProblems.
            publicUrl: new URL(values.PUBLIC_URL!),
          }
        : undefined,
  };
}

type EnvValues = z.infer<typeof EnvSchema>;

function crossFieldProblems(env: Record<string, string | undefined>, inCluster: boolean): string[] {
  const problems: string[] = [];
  if (env.LAB_KUBECONFIG === undefined && env.KUBECONFIG?.includes(path.delimiter)) {
    problems.push(
      "KUBECONFIG: lists several files; set LAB_KUBECONFIG to the one file the console should use",
    );
  }
  const headersSeconds = Number(env.LAB_HEADERS_TIMEOUT_SECONDS);
  const requestSeconds = Number(
    env.LAB_REQUEST_TIMEOUT_SECONDS ?? defaultServerLimits.requestTimeoutMs / 1000,
  );
  if (headersSeconds > 0 && requestSeconds > 0 && headersSeconds > requestSeconds) {
    problems.push(
      `LAB_HEADERS_TIMEOUT_SECONDS: must not be longer than LAB_REQUEST_TIMEOUT_SECONDS (${requestSeconds} s): the headers are part of the request`,
    );
  }
  const ltiOn = env.LTI_PLATFORMS_FILE !== undefined || env.LTI_DYNAMIC_REGISTRATION === "on";
  if (ltiOn && env.PUBLIC_URL === undefined) {
    problems.push(
      "PUBLIC_URL: must be set with LTI (LTI_PLATFORMS_FILE or LTI_DYNAMIC_REGISTRATION): every LMS is given " +
        "this console's launch address under it, never one taken from a request (docs/lti.md)",
    );
  }
  const clusterConfigured = env.LAB_KUBECONFIG !== undefined || env.KUBECONFIG !== undefined || inCluster;
  if (clusterConfigured && env.AUTH_MODE === undefined) {
    // Demo passwords are public: on a real cluster the sign-in mode is asked for, never assumed. The
    // shipped manifests leave it unset for that reason, so a pod that fails here came from them.
    const inPod = env.LAB_KUBECONFIG === undefined && env.KUBECONFIG === undefined;
    problems.push(
      "AUTH_MODE: must be set when a cluster is configured: 'oidc' with the OIDC_* settings (docs/auth.md), " +
        "or 'demo' to let the demo users, whose passwords are public, in on purpose" +
        (inPod
          ? ". In a pod, set it in the Deployment from your overlay: deploy/base leaves it unset, " +
            "deploy/overlays/demo sets 'demo' (docs/deploy.md)"
          : ""),
    );
  }
  return problems;
}

// Deliberately never falls back to ~/.kube/config: a developer's default context may be a production
// cluster, and an unconfigured start must not put student VMs there.
function chooseCluster(values: EnvValues, dataDir: string, inCluster: boolean): ClusterSource {
  const kubeconfig = values.LAB_KUBECONFIG ?? values.KUBECONFIG;
  if (kubeconfig !== undefined) return { kind: "kubeconfig", path: path.resolve(kubeconfig) };
  if (inCluster) return { kind: "in-cluster" };
  return {
    kind: "embedded-emulator",
    kubeconfigPath: path.join(dataDir, "kubeconfig"),
    timing: values.LAB_EMULATOR_TIMING,
    guests: values.LAB_EMULATOR_GUESTS,
  };
}
