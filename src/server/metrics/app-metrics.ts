// Every metric the BFF exports on /metrics, created once per app. Features record into the
// instruments here; live state (sessions, Kubernetes requests, watch restarts) is read at scrape time.
import type { KubeRequestCounter } from "../kube/request-counter.ts";
import type { SessionSource } from "../sessions/source.ts";
import { MetricsRegistry, type Counter, type Gauge, type Histogram } from "./registry.ts";

export interface AppMetrics {
  registry: MetricsRegistry;
  /** Browsers attached to a serial console; labels: role = "owner" | "observer". inc on attach, dec on detach. */
  consoleViewers: Gauge;
  /** The BFF reconnected a console to virt-api after the upstream dropped; labels: none. */
  consoleUpstreamReconnects: Counter;
  /**
   * One grading of one session, in seconds; labels: kind = "self-check" | "run",
   * outcome = "gradable" | "ungradable".
   */
  gradingDuration: Histogram;
  /** Launches refused before anything reached the cluster; labels: reason = the limit's name. */
  launchesRefused: Counter;
  /** Extensions granted; labels: by = "student" | "staff". */
  sessionsExtended: Counter;
  /** Sessions the reaper ended because their time was up. */
  sessionsReaped: Counter;
  /** Audit entries that could not be written (the action itself went ahead). */
  auditWriteFailures: Counter;
  /** Connections closed as they came; labels: reason = "per-address" | "total" (http/server-limits.ts). */
  connectionsRefused: Counter;
  /** One class wall searching the screens due (wall/wall-stream.ts), in seconds of its own time; labels: none. */
  wallSearchDuration: Histogram;
  /**
   * Patches on warm VMs refused for another reason than the race their test guards against (an
   * admission webhook, say); labels: patch = "claim" | "ready".
   */
  warmPatchRefusals: Counter;
}

export function createAppMetrics(): AppMetrics {
  const registry = new MetricsRegistry();
  return {
    registry,
    consoleViewers: registry.gauge("lab_console_console_viewers", "Browsers attached to a serial console."),
    consoleUpstreamReconnects: registry.counter(
      "lab_console_console_upstream_reconnects_total",
      "Times a console's connection to virt-api dropped and was re-established.",
    ),
    gradingDuration: registry.histogram(
      "lab_console_grading_duration_seconds",
      "How long grading one session took, by kind and outcome.",
      [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    ),
    launchesRefused: registry.counter(
      "lab_console_launches_refused_total",
      "Launches refused up front, by the limit that refused them.",
    ),
    sessionsExtended: registry.counter("lab_console_session_extensions_total", "Extensions granted."),
    sessionsReaped: registry.counter(
      "lab_console_sessions_reaped_total",
      "Sessions ended by the reaper because their time was up.",
    ),
    auditWriteFailures: registry.counter(
      "lab_console_audit_write_failures_total",
      "Audit entries that could not be stored.",
    ),
    connectionsRefused: registry.counter(
      "lab_console_connections_refused_total",
      "Connections closed as they came, over the cap per address or the cap on all of them.",
    ),
    wallSearchDuration: registry.histogram(
      "lab_console_wall_search_seconds",
      "How long one class wall took to search the screens that changed (or all, for a new search).",
      [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25],
    ),
    warmPatchRefusals: registry.counter(
      "lab_console_warm_patch_refusals_total",
      "Claims of warm VMs and their ready marks that the cluster refused, not by losing a race.",
    ),
  };
}

export interface LiveState {
  source: SessionSource;
  kubeRequests: KubeRequestCounter;
  /** Times each cluster watch was re-established, by resource. */
  watchRestarts(): Record<string, number>;
}

/** The metrics read from live state at every scrape. */
export function registerLiveMetrics(metrics: AppMetrics, live: LiveState): void {
  const { registry } = metrics;
  registry.collected("lab_console_sessions", "Sessions by status and lab.", "gauge", async () => {
    const { sessions } = await live.source.snapshot();
    const counts = new Map<string, { status: string; lab: string; value: number }>();
    for (const session of sessions) {
      const key = `${session.status}\n${session.labId}`;
      const entry = counts.get(key) ?? { status: session.status, lab: session.labId, value: 0 };
      entry.value += 1;
      counts.set(key, entry);
    }
    return [...counts.values()].map(({ status, lab, value }) => ({ labels: { status, lab }, value }));
  });
  registry.collected(
    "lab_console_kube_requests_total",
    'Requests to the Kubernetes API by verb and answer (HTTP status, or "error" when none came).',
    "counter",
    () =>
      live.kubeRequests
        .snapshot()
        .map(({ verb, code, count }) => ({ labels: { verb, code: String(code) }, value: count })),
  );
  registry.collected(
    "lab_console_watch_restarts_total",
    "Times a cluster watch ended and was started again (list + watch), by resource.",
    "counter",
    () => Object.entries(live.watchRestarts()).map(([resource, value]) => ({ labels: { resource }, value })),
  );
}

/** One session graded, by a self-check or in a run. */
export function recordGrading(
  metrics: AppMetrics,
  kind: "self-check" | "run",
  durationMs: number,
  gradable: boolean,
): void {
  metrics.gradingDuration.observe({ kind, outcome: gradable ? "gradable" : "ungradable" }, durationMs / 1000);
}
