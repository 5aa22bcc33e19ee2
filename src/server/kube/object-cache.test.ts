// The cache against a small real HTTP server that speaks the list and watch protocol, so the
// client's watch plumbing and the cache's loop are tested together over real sockets.
import { KubeConfig } from "@kubernetes/client-node";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../common/testing/patience.ts";
import { createClusterClient } from "./client.ts";
import { KubeRequestCounter } from "./request-counter.ts";
import type { VirtualMachine } from "./types.ts";
import { ObjectCache } from "./object-cache.ts";

const quietLog = { warn() {}, info() {} };

function vm(name: string, phase = "v1"): VirtualMachine {
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: { name, labels: { phase } },
    spec: { template: { metadata: {}, spec: {} as VirtualMachine["spec"]["template"]["spec"] } },
  };
}

/**
 * Just enough of an API server: one VM collection with a list, a watch stream and switchable
 * failures, or silence: a request it accepts and never answers, not even with headers.
 */
class FakeApi {
  readonly objects = new Map<string, VirtualMachine>();
  readonly watchers = new Set<ServerResponse>();
  /** Requests accepted and left without an answer, until the client gives up on them. */
  readonly unanswered = new Set<ServerResponse>();
  silentOn: "list" | "watch" | undefined;
  lists = 0;
  watches = 0;
  /** The resourceVersion each watch asked to start from, in order. */
  readonly watchedFrom: string[] = [];
  failLists = false;
  private resourceVersion = 1;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://x");
      const kind = url.searchParams.get("watch") === "true" ? "watch" : "list";
      if (!url.pathname.endsWith("/namespaces/labs/virtualmachines")) {
        response.writeHead(404).end();
      } else if (this.silentOn === kind) {
        this.unanswered.add(response);
        response.on("close", () => this.unanswered.delete(response));
      } else if (url.searchParams.get("watch") === "true") {
        this.watches += 1;
        this.watchedFrom.push(url.searchParams.get("resourceVersion") ?? "");
        response.writeHead(200, { "content-type": "application/json" });
        response.flushHeaders();
        this.watchers.add(response);
        response.on("close", () => this.watchers.delete(response));
      } else if (this.failLists) {
        this.lists += 1;
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ kind: "Status", code: 500, reason: "InternalError", message: "boom" }));
      } else {
        this.lists += 1;
        response.writeHead(200, { "content-type": "application/json" });
        const metadata = { resourceVersion: String(this.resourceVersion) };
        response.end(
          JSON.stringify({ kind: "VirtualMachineList", metadata, items: [...this.objects.values()] }),
        );
      }
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  /** Changes an object and tells every open watch. */
  put(object: VirtualMachine, type: "ADDED" | "MODIFIED" = "ADDED"): void {
    this.objects.set(object.metadata.name ?? "", object);
    this.send({ type, object });
  }

  remove(name: string): void {
    const object = this.objects.get(name);
    this.objects.delete(name);
    this.send({ type: "DELETED", object });
  }

  expireWatches(): void {
    this.send({
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old" },
    });
  }

  dropWatches(): void {
    for (const watcher of this.watchers) watcher.destroy();
  }

  /** Ends every watch as the API server does at its timeout: a clean end of the stream. */
  closeWatches(): void {
    for (const watcher of this.watchers) watcher.end();
  }

  /** A BOOKMARK at the current resourceVersion, as sent to watches that allow them. */
  bookmark(): string {
    this.send({
      type: "BOOKMARK",
      object: { kind: "VirtualMachine", apiVersion: "kubevirt.io/v1", metadata: {} },
    });
    return String(this.resourceVersion);
  }

  /** Each event bumps the version and carries it, as the API server's do. */
  private send(event: { type: string; object?: unknown }): void {
    this.resourceVersion += 1;
    const metadata = (event.object as { metadata?: { resourceVersion?: string } } | undefined)?.metadata;
    if (metadata) metadata.resourceVersion = String(this.resourceVersion);
    for (const watcher of this.watchers) watcher.write(JSON.stringify(event) + "\n");
  }

  async stop(): Promise<void> {
    this.dropWatches();
    for (const response of this.unanswered) response.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

function kubeConfigFor(server: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // Plain HTTP: the client only allows it with skipTLSVerify.
    clusters: [{ name: "fake", server, skipTLSVerify: true }],
    users: [{ name: "fake", token: "not-checked" }],
    contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
    currentContext: "fake",
  });
  return kubeConfig;
}

async function withinDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe("ObjectCache", () => {
  let api: FakeApi;
  let cache: ObjectCache<VirtualMachine> | undefined;
  const counter = new KubeRequestCounter();

  async function startCache(): Promise<ObjectCache<VirtualMachine>> {
    api = new FakeApi();
    const client = createClusterClient(kubeConfigFor(await api.start()), {
      namespace: "labs",
      labelSelector: "app.kubernetes.io/managed-by=lab-console",
      counter,
    });
    cache = new ObjectCache(client.virtualMachines, {
      name: "virtualmachines",
      log: quietLog,
      initialBackoffMs: 20,
      maxBackoffMs: 100,
      // The fake ends watches whenever a test says: none of them is a server hanging up at once.
      shortestHealthyWatchMs: 0,
    });
    return cache;
  }

  afterEach(async () => {
    await cache?.stop();
    await api.stop();
  });

  it("lists, then follows the watch", async () => {
    const cache = await startCache();
    api.put(vm("a"));
    expect(cache.synced).toBe(false);
    expect(cache.stale).toBe(true);
    cache.start();
    await waitFor(() => cache.synced && api.watchers.size === 1, "synced and watching");
    expect(cache.stale).toBe(false);
    expect(cache.list().map((object) => object.metadata.name)).toEqual(["a"]);

    const before = cache.version;
    api.put(vm("b"));
    api.put(vm("a", "v2"), "MODIFIED");
    api.remove("b");
    await waitFor(
      () => cache.get("a")?.metadata.labels?.phase === "v2" && cache.version >= before + 3,
      "events applied",
    );
    expect(cache.get("b")).toBeUndefined();
    expect(api.lists).toBe(1);
  });

  it("watches again from the last version it saw when the server ends a watch, without listing", async () => {
    const cache = await startCache();
    cache.start();
    await waitFor(() => api.watchers.size === 1, "watching");
    api.put(vm("a"));
    await waitFor(() => cache.get("a") !== undefined, "the event");
    api.closeWatches();
    await waitFor(() => api.watches === 2 && api.watchers.size === 1, "watching again");
    // A bookmark moves the version on without a change: the next watch resumes from it (the stream
    // ends after it, so the cache has read it by then).
    const bookmarked = api.bookmark();
    api.closeWatches();
    await waitFor(() => api.watches === 3 && api.watchers.size === 1, "watching a third time");
    expect(api.watchedFrom).toEqual(["1", "2", bookmarked]);
    expect(api.lists).toBe(1);
    expect(cache.stale).toBe(false);
    expect(cache.restarts).toBe(2);
  });

  it("lists again when the watch's version has expired (410)", async () => {
    const cache = await startCache();
    cache.start();
    await waitFor(() => api.watchers.size === 1, "watching");
    // Changed behind the watch's back: only a new list can show it.
    api.objects.set("missed", vm("missed"));
    api.expireWatches();
    await waitFor(() => cache.get("missed") !== undefined, "relisted");
    expect(api.lists).toBe(2);
    expect(cache.stale).toBe(false);
  });

  it("keeps its last view while the cluster fails, says it is stale, and recovers", async () => {
    const cache = await startCache();
    api.put(vm("kept"));
    cache.start();
    await waitFor(() => api.watchers.size === 1, "watching");

    api.failLists = true;
    api.dropWatches();
    await waitFor(() => cache.stale, "stale");
    expect(cache.get("kept")).toBeDefined();
    const failedLists = api.lists;
    await waitFor(() => api.lists >= failedLists + 2, "retried with backoff");

    api.failLists = false;
    await waitFor(() => !cache.stale && api.watchers.size === 1, "recovered");
    const codes = counter.snapshot().map(({ verb, code }) => `${verb} ${code}`);
    expect(codes).toEqual(expect.arrayContaining(["list 200", "list 500", "watch 200"]));
  });

  it.each(["list", "watch"] as const)(
    "stops at once while the API server sits on a %s without answering",
    async (silentOn) => {
      const cache = await startCache();
      api.silentOn = silentOn;
      cache.start();
      await waitFor(() => api.unanswered.size === 1, `the ${silentOn} request waiting for its answer`);
      await withinDeadline(cache.stop(), 2000, "stop()");
      // The request was abandoned, not left open on the socket.
      await waitFor(() => api.unanswered.size === 0, `the ${silentOn} request closed`);
    },
  );

  it("waitUntil resolves on the change it waits for, or false at its deadline", async () => {
    const cache = await startCache();
    cache.start();
    await waitFor(() => api.watchers.size === 1, "watching");
    const appears = cache.waitUntil(() => cache.get("late") !== undefined, 2000);
    api.put(vm("late"));
    expect(await appears).toBe(true);
    expect(await cache.waitUntil(() => cache.get("never") !== undefined, 50)).toBe(false);
  });
});
