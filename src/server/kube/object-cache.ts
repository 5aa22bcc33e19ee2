// One list+watch cache per kind, shared by every browser: reads never reach the cluster. The loop
// lists, then watches from the list's resourceVersion, as client-go's reflector does: the API server
// ends every watch after a random 30 to 60 minutes, and the cache watches again from the last
// resourceVersion it saw (of an event, or of a bookmark, which the watch asks for); only a version
// that has expired (410 Gone) or a broken watch makes it list again, errors backing off
// exponentially. While a watch is broken the cache keeps its last view and says it is stale.
// stop() aborts the request in flight, answered or not, so a silent API server cannot hold up a
// shutdown.
import type { FastifyBaseLogger } from "fastify";
import type { ResourceList, WatchEvent, WatchableResource } from "./client.ts";
import { KubeStatusError } from "./errors.ts";

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
}

export interface CacheOptions {
  /** For log lines, e.g. "virtualmachines". */
  name: string;
  log: Pick<FastifyBaseLogger, "warn" | "info">;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A watch the server closes sooner than this counts as a failure, so a server that hangs up at
   * once cannot drive the loop as fast as it can. Default 1 s.
   */
  shortestHealthyWatchMs?: number;
}

type WatchOutcome = { kind: "closed" } | { kind: "expired" } | { kind: "failed"; error: unknown };

export class ObjectCache<T extends Named> {
  private objects = new Map<string, T>();
  private readonly listeners = new Set<() => void>();
  private running = false;
  /** The list or watch under way: stop() aborts it. */
  private inFlight: AbortController | undefined;
  private wakeFromBackoff: (() => void) | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private syncedOnce = false;
  private watching = false;
  private changeCount = 0;
  private restartCount = 0;
  /** Where a watch that ended normally resumes; undefined until listed, and after a 410 or a failure. */
  private resourceVersion: string | undefined;

  constructor(
    private readonly source: WatchableResource<T>,
    private readonly options: CacheOptions,
  ) {}

  /** True once the first list has arrived. */
  get synced(): boolean {
    return this.syncedOnce;
  }

  /** True when the view may be behind the cluster: not synced yet, or the watch is broken. */
  get stale(): boolean {
    return !this.watching;
  }

  /** How often the watch ended (closed, expired or failed) and the loop watched (or listed) again. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Changes whenever the contents or staleness change; cheap to compare for memoizing. */
  get version(): number {
    return this.changeCount;
  }

  get(name: string): T | undefined {
    return this.objects.get(name);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves true as soon as `condition` holds, false after `timeoutMs`. */
  waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (result: boolean) => {
        clearTimeout(timer);
        unsubscribe();
        resolve(result);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      const unsubscribe = this.onChange(() => {
        if (condition()) finish(true);
      });
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.inFlight?.abort();
    this.wakeFromBackoff?.();
    await this.loopDone;
  }

  private async run(): Promise<void> {
    const initialBackoffMs = this.options.initialBackoffMs ?? 250;
    // Capped low: two lists every few seconds cost an API server nothing, and after an outage the
    // view must be current again within seconds, not after a 30 s sleep that began while it was down.
    const maxBackoffMs = this.options.maxBackoffMs ?? 5_000;
    let backoffMs = initialBackoffMs;
    while (this.running) {
      const outcome = await this.listAndWatch();
      if (!this.running) break;
      this.restartCount += 1;
      if (outcome.kind !== "closed") this.resourceVersion = undefined;
      if (outcome.kind === "failed") {
        this.setWatching(false);
        this.options.log.warn(
          { resource: this.options.name, retryInMs: backoffMs, reason: describe(outcome.error) },
          "cluster watch broken; serving the last view",
        );
        await this.sleep(backoffMs * (0.5 + Math.random() / 2));
        backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
      } else {
        backoffMs = initialBackoffMs;
      }
    }
    this.setWatching(false);
  }

  /** Lists first unless a watch ended normally and left a resourceVersion to resume from. */
  private async listAndWatch(): Promise<WatchOutcome> {
    const request = new AbortController();
    this.inFlight = request;
    try {
      if (this.resourceVersion === undefined) {
        let list: ResourceList<T>;
        try {
          list = await this.source.list(request.signal);
        } catch (error) {
          return { kind: "failed", error };
        }
        if (!this.running) return { kind: "closed" };
        this.replaceAll(list.items);
        this.resourceVersion = list.resourceVersion;
      }
      return await this.watchFrom(this.resourceVersion, request);
    } finally {
      this.inFlight = undefined;
    }
  }

  private watchFrom(resourceVersion: string, request: AbortController): Promise<WatchOutcome> {
    const startedAt = Date.now();
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: WatchOutcome) => {
        if (settled) return;
        settled = true;
        // Ends the stream when the cache decided to (an ERROR event); harmless once it has ended.
        request.abort();
        resolve(outcome);
      };
      const onEvent = (event: WatchEvent<T>) => {
        if (event.type === "ERROR") {
          settle(isExpired(event.error) ? { kind: "expired" } : { kind: "failed", error: event.error });
          return;
        }
        if (event.type !== "BOOKMARK") this.apply(event.type, event.object);
        // Opaque: only ever sent back to the server as it came.
        const seen =
          event.type === "BOOKMARK" ? event.resourceVersion : event.object.metadata?.resourceVersion;
        if (seen) this.resourceVersion = seen;
      };
      const onClosed = (error: unknown) => {
        if (error) settle(isExpired(error) ? { kind: "expired" } : { kind: "failed", error });
        else if (Date.now() - startedAt < (this.options.shortestHealthyWatchMs ?? 1000)) {
          settle({ kind: "failed", error: new Error("the server closed the watch at once") });
        } else settle({ kind: "closed" });
      };
      this.source
        .watch(resourceVersion, onEvent, onClosed, request.signal)
        .catch((error: unknown) => settle({ kind: "failed", error }));
    });
  }

  private replaceAll(items: T[]): void {
    const next = new Map<string, T>();
    for (const item of items) {
      const name = item.metadata?.name;
      if (name) next.set(name, item);
    }
    this.objects = next;
    this.syncedOnce = true;
    this.watching = true;
    this.changed();
  }

  private apply(type: "ADDED" | "MODIFIED" | "DELETED", object: T): void {
    const name = object.metadata?.name;
    if (!name) return;
    if (type === "DELETED") this.objects.delete(name);
    else this.objects.set(name, object);
    this.changed();
  }

  private setWatching(watching: boolean): void {
    if (this.watching === watching) return;
    this.watching = watching;
    this.changed();
  }

  private changed(): void {
    this.changeCount += 1;
    for (const listener of this.listeners) listener();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeFromBackoff = done;
    });
  }
}

function isExpired(error: unknown): boolean {
  return error instanceof KubeStatusError && error.statusCode === 410;
}

/** One line for the log: an unreachable cluster is expected here, its stack trace is not news. */
function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return error instanceof Error ? `${error.message}${cause}` : String(error);
}
