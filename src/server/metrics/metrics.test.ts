// /metrics: the Prometheus text format, and what the BFF exports behind its bearer token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";
import { MetricsRegistry } from "./registry.ts";

describe("the registry", () => {
  it("renders counters, gauges and histograms with escaped labels, skipping a metric that cannot be read", async () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter("demo_total", "A counter.\nTwo lines.");
    counter.inc({ path: 'a"b\\c' }, 2);
    registry.gauge("demo_gauge", "A gauge.").set({}, 1.5);
    const histogram = registry.histogram("demo_seconds", "A histogram.", [1, 0.5]);
    histogram.observe({ kind: "x" }, 0.7);
    histogram.observe({ kind: "x" }, 3);
    registry.collected("demo_broken", "Fails.", "gauge", () => {
      throw new Error("unreadable");
    });
    expect(() => registry.counter("demo_total", "again")).toThrow("registered twice");
    expect(() => counter.inc({}, -1)).toThrow();

    expect(await registry.render()).toBe(
      [
        "# HELP demo_total A counter.\\nTwo lines.",
        "# TYPE demo_total counter",
        'demo_total{path="a\\"b\\\\c"} 2',
        "# HELP demo_gauge A gauge.",
        "# TYPE demo_gauge gauge",
        "demo_gauge 1.5",
        "# HELP demo_seconds A histogram.",
        "# TYPE demo_seconds histogram",
        'demo_seconds_bucket{kind="x",le="0.5"} 0',
        'demo_seconds_bucket{kind="x",le="1"} 1',
        'demo_seconds_bucket{kind="x",le="+Inf"} 2',
        'demo_seconds_sum{kind="x"} 3.7',
        'demo_seconds_count{kind="x"} 2',
        "",
      ].join("\n"),
    );
  });
});

describe("GET /metrics", () => {
  const token = "a-metrics-token-for-tests";
  let bff: TestBff;
  beforeAll(async () => {
    bff = await startTestBff({
      labs: [aLab(), aLab({ id: "git-workflow", title: "Git" })],
      metricsToken: token,
    });
  });
  afterAll(() => bff?.close());

  const scrape = (authorization?: string) =>
    fetch(`${bff.url}/metrics`, { headers: authorization ? { authorization } : {} });

  it("answers only with the bearer token", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("Bearer not-the-token")).status).toBe(401);
    expect((await scrape(`Bearer ${token}`)).status).toBe(200);
    const off = await startTestBff({ labs: [aLab()], emulator: bff.emulator });
    try {
      const answer = await fetch(`${off.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it("exports sessions by status and lab, Kubernetes requests, watch restarts, refusals and extensions", async () => {
    const alice = await bff.signIn("alice");
    const launched = await alice.post("/api/sessions", { labId: "linux-basics" });
    expect(launched.status).toBe(201);
    expect((await alice.post("/api/sessions", { labId: "git-workflow" })).status).toBe(429);
    expect((await alice.post(`/api/sessions/${launched.body.id}/extend`)).status).toBe(200);
    const text = await eventually(
      async () => (await scrape(`Bearer ${token}`)).text(),
      (body) => body.includes('lab_console_sessions{lab="linux-basics",status="running"} 1'),
      { what: "the running session in /metrics" },
    );
    expect(text).toMatch(/^lab_console_kube_requests_total\{code="201",verb="create"\} [1-9]/m);
    expect(text).toMatch(/^lab_console_kube_requests_total\{code="200",verb="watch"\} [1-9]/m);
    expect(text).toContain('lab_console_watch_restarts_total{resource="virtualmachines"} 0');
    expect(text).toContain("# TYPE lab_console_grading_duration_seconds histogram");
    expect(text).toContain("# TYPE lab_console_console_viewers gauge");
    expect(text).toContain('lab_console_launches_refused_total{reason="per-student"} 1');
    expect(text).toContain('lab_console_session_extensions_total{by="student"} 1');
    expect(text).toMatch(/^lab_console_kube_requests_total\{code="200",verb="patch"\} 1$/m);
  });
});
