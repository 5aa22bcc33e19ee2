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
      trustProxy: false,
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
