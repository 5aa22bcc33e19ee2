// Watch streams: newline-delimited JSON events over a chunked response, like the API server's watch
// cache. With no resourceVersion (or "0") a watch starts with ADDED for every current object; with a
// specific one it replays the kept history after it, or ends with an ERROR 410 Expired when that
// history is gone. Every open watch is tracked so all of them can be ended at once.
import type { ServerResponse } from "node:http";
import { badRequest, expired } from "../http/status.ts";
import type { Representation } from "../http/negotiation.ts";
import type { KubeObject } from "../cluster/objects.ts";
import { apiVersionOf, type ResourceType } from "../cluster/resources.ts";
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from "./selectors.ts";
import type { EventType, ObjectStore, StoreEvent } from "./store.ts";
import type { IncludeObject } from "./table.ts";
import { presentObject } from "./present.ts";

export interface WatchRequest {
  resource: ResourceType;
  /** "" for all namespaces. */
  namespace: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  resourceVersion: string;
  timeoutSeconds: number | undefined;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  representation: Representation;
  includeObject: IncludeObject;
}

type WatchEventType = EventType | "BOOKMARK" | "ERROR";

export interface WatchTiming {
  /** Between bookmarks, for watches that allow them. */
  bookmarkIntervalMs: number;
  /** A watch that names no timeoutSeconds ends after a random time in this range. */
  timeout: { minMs: number; maxMs: number };
}

/** The API server's own: a bookmark a minute, and a watch ends after 30 to 60 minutes. */
export const apiServerWatchTiming: WatchTiming = {
  bookmarkIntervalMs: 60_000,
  timeout: { minMs: 1_800_000, maxMs: 3_600_000 },
};

// A client that stops reading gets cut off instead of growing the emulator's memory.
const maxBufferedBytes = 16 * 1024 * 1024;

class ActiveWatch {
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    readonly request: WatchRequest,
    private readonly response: ServerResponse,
    private readonly store: ObjectStore,
    private readonly onClose: (watch: ActiveWatch) => void,
  ) {}

  start({ bookmarkIntervalMs, timeout }: WatchTiming): void {
    this.response.writeHead(200, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked",
    });
    this.response.flushHeaders();
    this.response.on("close", () => this.close());
    // Without timeoutSeconds (or with 0) the API server ends a watch after a random 30 to 60 minutes
    // (--min-request-timeout, 1800 s, times one to two: k8s.io/apiserver endpoints/handlers/watch.go).
    const timeoutMs = this.request.timeoutSeconds
      ? this.request.timeoutSeconds * 1000
      : timeout.minMs + Math.random() * (timeout.maxMs - timeout.minMs);
    this.timers.push(
      setTimeout(() => {
        if (this.request.allowBookmarks) this.sendBookmark();
        this.close();
      }, timeoutMs),
    );
    if (this.request.allowBookmarks) {
      const interval = setInterval(() => this.sendBookmark(), bookmarkIntervalMs);
      this.timers.push(interval);
    }
  }

  matches(object: KubeObject): boolean {
    const { namespace, labelSelector, fieldSelector } = this.request;
    if (namespace !== "" && object.metadata.namespace !== namespace) return false;
    return matchesLabels(labelSelector, object.metadata.labels) && matchesFields(fieldSelector, object);
  }

  /** Delivers a store event, turning it into ADDED or DELETED when it moves in or out of the selection. */
  deliver(event: StoreEvent): void {
    if (this.closed || event.resource !== this.request.resource) return;
    const now = this.matches(event.object);
    const before = event.previous ? this.matches(event.previous) : false;
    let type: EventType | undefined;
    if (event.type === "ADDED") type = now ? "ADDED" : undefined;
    else if (event.type === "DELETED") type = before || now ? "DELETED" : undefined;
    else if (now && before) type = "MODIFIED";
    else if (now) type = "ADDED";
    else if (before) type = "DELETED";
    if (type) this.send(type, this.present(event.object));
  }

  send(type: WatchEventType, object: unknown): void {
    if (this.closed) return;
    this.response.write(`${JSON.stringify({ type, object })}\n`);
    if (this.response.writableLength > maxBufferedBytes) this.close();
  }

  sendBookmark(annotations?: Record<string, string>): void {
    const resource = this.request.resource;
    this.send("BOOKMARK", {
      kind: resource.kind,
      apiVersion: apiVersionOf(resource),
      metadata: {
        resourceVersion: String(this.store.currentRevision()),
        ...(annotations ? { annotations } : {}),
      },
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.response.end();
    this.onClose(this);
  }

  private present(object: KubeObject): unknown {
    const { resource, representation, includeObject } = this.request;
    return presentObject(resource, object, representation, includeObject);
  }
}

export class WatchHub {
  private readonly active = new Set<ActiveWatch>();

  constructor(
    private readonly store: ObjectStore,
    private readonly timing: WatchTiming,
  ) {
    store.subscribe((event) => {
      for (const watch of this.active) watch.deliver(event);
    });
  }

  get size(): number {
    return this.active.size;
  }

  serve(response: ServerResponse, request: WatchRequest): void {
    const { resourceVersion } = request;
    const fromNow = resourceVersion === "" || resourceVersion === "0";
    let history: StoreEvent[] | undefined = [];
    let tooOld = false;
    if (!fromNow) {
      if (!/^[0-9]+$/.test(resourceVersion)) throw badRequest(`invalid resource version: ${resourceVersion}`);
      history = this.store.eventsAfter(request.resource, Number(resourceVersion));
      tooOld = history === undefined;
    }

    const watch = new ActiveWatch(request, response, this.store, (closed) => this.active.delete(closed));
    watch.start(this.timing);
    this.active.add(watch);
    if (tooOld) {
      const error = expired(`too old resource version: ${resourceVersion} (${this.store.currentRevision()})`);
      watch.send("ERROR", error.toStatus());
      watch.close();
      return;
    }
    if (fromNow) {
      const current = this.store.list(request.resource, request.namespace || undefined);
      for (const object of current) {
        if (watch.matches(object))
          watch.deliver({ type: "ADDED", resource: request.resource, object, revision: 0 });
      }
      if (request.sendInitialEvents && request.allowBookmarks) {
        watch.sendBookmark({ "k8s.io/initial-events-end": "true" });
      }
    } else {
      for (const event of history ?? []) watch.deliver(event);
    }
  }

  /** Ends every open watch; clients see their stream close and re-watch. */
  closeAll(): void {
    for (const watch of [...this.active]) watch.close();
  }
}
