import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

function problemsOf(env: Record<string, string>, inCluster = false): string[] {
  try {
    loadConfig({ env, inCluster });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected the configuration to be rejected");
}

describe("loadConfig", () => {
  it("starts the embedded emulator with demo sign-in when nothing is configured", () => {
    const config = loadConfig({ env: { HOME: "/home/dev" }, inCluster: false });
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      namespace: "lab-sessions",
      authMode: "demo",
      sessionsReadMode: "cache",
      allowedOrigins: [],
      trustProxy: undefined,
      vmSizes: {
        small: { cpu: 1, memory: "2Gi" },
        medium: { cpu: 2, memory: "4Gi" },
        large: { cpu: 4, memory: "8Gi" },
      },
    });
    expect(config.cluster).toMatchObject({ kind: "embedded-emulator", timing: "realistic" });
    expect(config.cluster.kind === "embedded-emulator" && config.cluster.kubeconfigPath).toMatch(
      /\.lab\/kubeconfig$/,
    );
    expect(config.usersFile).toMatch(/\.lab\/users\.json$/);
  });

  it("reports every bad value at once", () => {
    const problems = problemsOf({
      PORT: "http",
      LAB_NAMESPACE: "Lab_Sessions",
      AUTH_MODE: "ldap",
      SESSION_SECRET: "short",
      AGENT_TOKEN_SECRET: "short",
      LAB_ALLOWED_ORIGINS: "https://ok.example, https://bad.example/path",
      TRUST_PROXY: "maybe",
      LAB_EMULATOR_TIMING: "instant",
      LAB_VM_SIZES: '{"huge": {"cpu": 0, "memory": "lots"}}',
    });
    const fields = problems.map((problem) => problem.split(/[.:]/)[0]);
    expect(fields).toEqual(
      expect.arrayContaining([
        "PORT",
        "LAB_NAMESPACE",
        "AUTH_MODE",
        "SESSION_SECRET",
        "AGENT_TOKEN_SECRET",
        "LAB_ALLOWED_ORIGINS",
        "TRUST_PROXY",
        "LAB_EMULATOR_TIMING",
        "LAB_VM_SIZES",
      ]),
    );
    expect(problems.filter((problem) => problem.startsWith("LAB_VM_SIZES"))).toHaveLength(2);
  });

  it("uses an explicit kubeconfig and then insists on an explicit sign-in mode", () => {
    expect(problemsOf({ LAB_KUBECONFIG: "/etc/lab/kubeconfig" })).toEqual([
      expect.stringMatching(/^AUTH_MODE: must be set/),
    ]);
    const config = loadConfig({ env: { KUBECONFIG: "/k/config", AUTH_MODE: "demo" }, inCluster: false });
    expect(config.cluster).toEqual({ kind: "kubeconfig", path: "/k/config" });
  });

  it("in a pod without AUTH_MODE, says where to set it: deploy/base leaves it unset on purpose", () => {
    expect(problemsOf({}, true)).toEqual([
      "AUTH_MODE: must be set when a cluster is configured: 'oidc' with the OIDC_* settings (docs/auth.md), " +
        "or 'demo' to let the demo users, whose passwords are public, in on purpose. In a pod, set it in the " +
        "Deployment from your overlay: deploy/base leaves it unset, deploy/overlays/demo sets 'demo' (docs/deploy.md)",
    ]);
  });

  it("prefers LAB_KUBECONFIG over KUBECONFIG, and either over the pod's service account", () => {
    const config = loadConfig({
      env: { LAB_KUBECONFIG: "/lab/config", KUBECONFIG: "/a:/b", AUTH_MODE: "demo" },
      inCluster: true,
    });
    expect(config.cluster).toEqual({ kind: "kubeconfig", path: "/lab/config" });
    expect(loadConfig({ env: { AUTH_MODE: "demo" }, inCluster: true }).cluster).toEqual({
      kind: "in-cluster",
    });
  });

  it("refuses a KUBECONFIG list, which would be ambiguous about the cluster", () => {
    expect(problemsOf({ KUBECONFIG: "/a:/b", AUTH_MODE: "demo" })).toEqual([
      expect.stringMatching(/^KUBECONFIG: lists several files/),
    ]);
  });

  it("treats empty variables as unset", () => {
    const config = loadConfig({ env: { PORT: "", LAB_NAMESPACE: "", KUBECONFIG: "" }, inCluster: false });
    expect(config.port).toBe(8080);
    expect(config.cluster.kind).toBe("embedded-emulator");
  });
});

describe("loadConfig: the cluster's own address ranges", () => {
  it("takes the private ranges by default, and reads a list of CIDRs", () => {
    expect(loadConfig({ env: {}, inCluster: false }).clusterCidrs).toEqual([
      "10.0.0.0/8",
      "172.16.0.0/12",
      "192.168.0.0/16",
      "100.64.0.0/10",
      "fc00::/7",
    ]);
    const config = loadConfig({
      env: { LAB_CLUSTER_CIDRS: "10.244.0.0/16, 10.96.0.0/12,192.168.10.0/24,fd00:10::/64" },
      inCluster: false,
    });
    expect(config.clusterCidrs).toEqual(["10.244.0.0/16", "10.96.0.0/12", "192.168.10.0/24", "fd00:10::/64"]);
  });

  it("refuses entries that are no range", () => {
    expect(problemsOf({ LAB_CLUSTER_CIDRS: "10.244.0.0/16,10.96.0.1/12,pods" })).toEqual([
      "LAB_CLUSTER_CIDRS: each entry must be a range like 10.244.0.0/16: 10.96.0.1/12 (did you mean 10.96.0.0/12?), pods",
    ]);
  });
});

describe("loadConfig: limits and metrics", () => {
  it("allows one session per student and nothing else by default, and keeps /metrics off", () => {
    const config = loadConfig({ env: {}, inCluster: false });
    expect(config.quotas).toEqual({ perStudent: 1, perLab: null, total: null });
    expect(config.metricsToken).toBeUndefined();
  });

  it("reads the limits and the metrics token, refusing nonsense", () => {
    const config = loadConfig({
      env: {
        LAB_MAX_SESSIONS_PER_STUDENT: "2",
        LAB_MAX_SESSIONS_PER_LAB: "30",
        LAB_MAX_SESSIONS: "120",
        METRICS_TOKEN: "0123456789abcdef0123",
      },
      inCluster: false,
    });
    expect(config.quotas).toEqual({ perStudent: 2, perLab: 30, total: 120 });
    expect(config.metricsToken).toBe("0123456789abcdef0123");
    const problems = problemsOf({
      LAB_MAX_SESSIONS_PER_STUDENT: "0",
      LAB_MAX_SESSIONS: "many",
      METRICS_TOKEN: "short",
    });
    expect(problems.map((problem) => problem.split(":")[0]).sort()).toEqual([
      "LAB_MAX_SESSIONS",
      "LAB_MAX_SESSIONS_PER_STUDENT",
      "METRICS_TOKEN",
    ]);
  });
});

describe("loadConfig: TRUST_PROXY", () => {
  it("takes how many proxies stand in front", () => {
    expect(loadConfig({ env: { TRUST_PROXY: "1" }, inCluster: false }).trustProxy).toEqual({
      kind: "hops",
      hops: 1,
    });
    expect(loadConfig({ env: { TRUST_PROXY: " 2 " }, inCluster: false }).trustProxy).toEqual({
      kind: "hops",
      hops: 2,
    });
  });

  it("takes the proxies' addresses and ranges, IPv4 and IPv6", () => {
    const config = loadConfig({
      env: { TRUST_PROXY: "10.0.0.0/8, 192.168.1.7,fd00::/8 , 2001:db8::1" },
      inCluster: false,
    });
    expect(config.trustProxy).toEqual({
      kind: "addresses",
      addresses: ["10.0.0.0/8", "192.168.1.7", "fd00::/8", "2001:db8::1"],
    });
  });

  it("refuses anything that would trust every client, saying what to write instead", () => {
    for (const value of ["true", "yes", "on", "all", "*", "0.0.0.0/0", "::/0", "0"]) {
      const [problem, ...others] = problemsOf({ TRUST_PROXY: value });
      expect(others).toEqual([]);
      expect(problem).toMatch(/^TRUST_PROXY: /);
      expect(problem).toContain("TRUST_PROXY=1");
      expect(problem).toContain("TRUST_PROXY=10.0.0.0/8");
    }
  });

  it("names every entry of a list that is not an address or a range, with the other bad values", () => {
    const problems = problemsOf({
      TRUST_PROXY: "10.0.0.0/8, 10.0.0.0/33, proxy.example, 10.1.2.300",
      PORT: "x",
    });
    expect(problems.filter((problem) => problem.startsWith("TRUST_PROXY"))).toEqual([
      expect.stringContaining('"10.0.0.0/33"'),
      expect.stringContaining('"proxy.example"'),
      expect.stringContaining('"10.1.2.300"'),
    ]);
    expect(problems.some((problem) => problem.startsWith("PORT"))).toBe(true);
  });

  it("refuses a range with bits set after the prefix, saying which range or address to write", () => {
    const problems = problemsOf({
      TRUST_PROXY: "10.0.0.1/8, 192.168.1.7, fd00::1/8, proxy.example, 10.0.0.0/0",
    });
    expect(problems).toEqual([
      expect.stringMatching(/^TRUST_PROXY: "10\.0\.0\.1\/8" .*10\.0\.0\.0\/8.*10\.0\.0\.1\b/),
      expect.stringMatching(/^TRUST_PROXY: "fd00::1\/8" .*fd00::\/8.*fd00::1\b/),
      expect.stringContaining('"proxy.example"'),
      expect.stringContaining('"10.0.0.0/0" would trust every address'),
    ]);
  });
});

describe("loadConfig: timeouts and connection caps", () => {
  it("cuts slow requests and caps connections by default", () => {
    expect(loadConfig({ env: {}, inCluster: false }).serverLimits).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 20_000,
      keepAliveTimeoutMs: 72_000,
      idleTimeoutMs: 60_000,
      maxConnections: 4096,
      maxConnectionsPerAddress: 1024,
    });
  });

  it("reads them, refusing nonsense and a headers timeout longer than the request timeout", () => {
    const config = loadConfig({
      env: {
        LAB_REQUEST_TIMEOUT_SECONDS: "60",
        LAB_HEADERS_TIMEOUT_SECONDS: "10",
        LAB_KEEP_ALIVE_TIMEOUT_SECONDS: "350",
        LAB_IDLE_TIMEOUT_SECONDS: "120",
        LAB_MAX_CONNECTIONS: "10000",
        LAB_MAX_CONNECTIONS_PER_ADDRESS: "1000",
      },
      inCluster: false,
    });
    expect(config.serverLimits).toEqual({
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 350_000,
      idleTimeoutMs: 120_000,
      maxConnections: 10_000,
      maxConnectionsPerAddress: 1000,
    });
    const problems = problemsOf({
      LAB_REQUEST_TIMEOUT_SECONDS: "0",
      LAB_KEEP_ALIVE_TIMEOUT_SECONDS: "soon",
      LAB_MAX_CONNECTIONS: "1.5",
      LAB_MAX_CONNECTIONS_PER_ADDRESS: "-3",
    });
    expect(problems.map((problem) => problem.split(":")[0]).sort()).toEqual([
      "LAB_KEEP_ALIVE_TIMEOUT_SECONDS",
      "LAB_MAX_CONNECTIONS",
      "LAB_MAX_CONNECTIONS_PER_ADDRESS",
      "LAB_REQUEST_TIMEOUT_SECONDS",
    ]);
    expect(problemsOf({ LAB_REQUEST_TIMEOUT_SECONDS: "10", LAB_HEADERS_TIMEOUT_SECONDS: "20" })).toEqual([
      expect.stringMatching(/^LAB_HEADERS_TIMEOUT_SECONDS: must not be longer than/),
    ]);
  });
});

describe("loadConfig: LTI", () => {
  it("is off unless a platforms file or dynamic registration is given", () => {
    expect(loadConfig({ env: {}, inCluster: false }).lti).toBeUndefined();
    expect(loadConfig({ env: { LTI_DYNAMIC_REGISTRATION: "off" }, inCluster: false }).lti).toBeUndefined();
  });

  it("reads the platforms file's path and dynamic registration, on PUBLIC_URL", () => {
    const config = loadConfig({
      env: {
        LTI_PLATFORMS_FILE: "lti.yaml",
        LTI_DYNAMIC_REGISTRATION: "on",
        PUBLIC_URL: "https://lab.example.edu",
      },
      inCluster: false,
    });
    expect(config.lti).toEqual({
      platformsFile: expect.stringMatching(/\/lti\.yaml$/),
      dynamicRegistration: true,
      publicUrl: new URL("https://lab.example.edu"),
    });
  });

  it("insists on PUBLIC_URL, which every LMS is given, and on on or off", () => {
    expect(problemsOf({ LTI_PLATFORMS_FILE: "lti.yaml" })).toEqual([
      expect.stringMatching(/^PUBLIC_URL: must be set with LTI/),
    ]);
    expect(problemsOf({ LTI_DYNAMIC_REGISTRATION: "yes", PUBLIC_URL: "https://lab.example.edu" })).toEqual([
      expect.stringMatching(/^LTI_DYNAMIC_REGISTRATION: /),
    ]);
  });
});
