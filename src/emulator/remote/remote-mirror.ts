// The emulator's controllers beside a real API server (`--apiserver`): the kinds they read are
// listed and watched there and copied into the emulator's own store, and every change the
// controllers make in that store is sent back as the matching request (create, merge patch, status
// patch, binding, delete: server-writes.ts). The controllers keep working on a local store with
// synchronous writes, as they do when the emulator is the API server; the mirror is the only part
// that knows the difference.
//
// Three things keep the two sides consistent:
// - Changes are sent one at a time in the order they happened, so a pod's owner exists on the server
//   before the pod that names it.
// - While changes to an object are on their way, what the watch says about that object is held back
//   (it may predate them) and the newest of it and the server's last answer is copied in afterwards.
// - The server gives objects the emulator creates their own uids. References are translated both
//   ways (owner references, the launcher pod's created-by label), so the controllers keep the uids
//   they know and the server's objects point at the server's uids.
import { field, isJsonObject, type KubeObject } from "../cluster/objects.ts";
import {
  events,
  kubeVirts,
  namespaces,
  nodes,
  pods,
  secrets,
  virtualMachineInstances,
  virtualMachines,
  type ResourceType,
} from "../cluster/resources.ts";
import type { ObjectStore, StoreEvent } from "../apiserver/store.ts";
import { keyOf, translated, versionOf, withoutServerMetadata } from "./mirrored-objects.ts";
import { resourcePath, type RemoteApi, type WatchEvent } from "./remote-api.ts";
import { describeAnswer, ServerWrites } from "./server-writes.ts";

/** What the mirror uses of the real API server's client. */
export type RemoteClient = Pick<RemoteApi, "request" | "watch" | "close">;

/** The kinds the controllers read, copied from the real API server. */
export const mirroredKinds: ResourceType[] = [
  namespaces,
  nodes,
  secrets,
  kubeVirts,
  virtualMachines,
  virtualMachineInstances,
  pods,
];

/** The kinds whose local changes go to the real API server: the mirrored ones and the events. */
const sentKinds = new Set<ResourceType>([...mirroredKinds, events]);

export interface RemoteMirrorOptions {
  store: ObjectStore;
  api: RemoteClient;
  log: (line: string) => void;
}

interface ServerNews {
  resource: ResourceType;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

export class RemoteMirror {
  private readonly store: ObjectStore;
  private readonly api: RemoteClient;
  private readonly log: (line: string) => void;
  private readonly abort = new AbortController();
  /** The local revision of the change being copied in, so it is not sent back. */
  private copyingRevision: number | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly unsent = new Map<string, number>();
  private readonly heldBack = new Map<string, ServerNews>();
  private readonly lastAnswer = new Map<string, ServerNews>();
  private readonly copiedVersion = new Map<string, number>();
  private readonly writes: ServerWrites;
  private readonly watches: Promise<void>[] = [];
  private unsubscribe: (() => void) | undefined;

  constructor(options: RemoteMirrorOptions) {
    this.store = options.store;
    this.api = options.api;
    this.log = options.log;
    this.writes = new ServerWrites(options.api, options.log, (resource, object) =>
      this.lastAnswer.set(keyOf(resource, object), { resource, type: "MODIFIED", object }),
    );
  }

  /** Copies every mirrored kind in, then starts the watches and sending local changes. */
  async start(): Promise<void> {
    const versions: string[] = [];
    for (const resource of mirroredKinds) versions.push(await this.copyAll(resource));
    this.unsubscribe = this.store.subscribe((event) => this.onLocalChange(event));
    mirroredKinds.forEach((resource, index) =>
      this.watches.push(this.keepWatching(resource, versions[index] ?? "0")),
    );
  }

  /** Resolves once every change made so far has been answered by the server. */
  async flushed(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.sending;
      await tail;
    } while (tail !== this.sending);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.abort.abort();
    await Promise.allSettled(this.watches);
    await this.flushed();
    this.api.close();
  }

  // --- from the server ---

  /** Lists a kind and copies it in; objects gone from the server go here too. Returns the list's version. */
  private async copyAll(resource: ResourceType): Promise<string> {
    let answer = await this.api.request("GET", resourcePath(resource, ""));
    // A CRD just established answers 429 until its storage is ready; reflectors retry, so do we.
    for (let attempt = 1; answer.status === 429 && attempt < 50 && !this.abort.signal.aborted; attempt++) {
      await pause(200, this.abort.signal);
      answer = await this.api.request("GET", resourcePath(resource, ""));
    }
    if (answer.status !== 200 || !isJsonObject(answer.body)) {
      throw new Error(`listing ${resource.plural} on the API server failed: ${describeAnswer(answer)}`);
    }
    const items = (Array.isArray(answer.body.items) ? answer.body.items : []) as KubeObject[];
    const apiVersion = resource.group === "" ? resource.version : `${resource.group}/${resource.version}`;
    const present = new Set<string>();
    for (const item of items) {
      const object = { ...item, apiVersion, kind: resource.kind };
      present.add(keyOf(resource, object));
      this.fromServer({ resource, type: "MODIFIED", object });
    }
    const listVersion = Number(field(answer.body, "metadata", "resourceVersion")) || 0;
    for (const local of this.store.list(resource)) {
      const key = keyOf(resource, local);
      // Absent from the list, and not newer than it: an object created after the list's snapshot
      // (answered while the list was on its way) stays.
      if (!present.has(key) && !this.unsent.get(key) && (this.copiedVersion.get(key) ?? 0) <= listVersion) {
        this.writeFromServer(() =>
          this.store.remove(resource, local.metadata.namespace ?? "", local.metadata.name),
        );
      }
    }
    return String(field(answer.body, "metadata", "resourceVersion") ?? "0");
  }

  private async keepWatching(resource: ResourceType, fromVersion: string): Promise<void> {
    let version = fromVersion;
    while (!this.abort.signal.aborted) {
      let expired = false;
      const began = Date.now();
      try {
        await this.api.watch(
          resourcePath(resource, ""),
          version,
          (event: WatchEvent) => {
            if (event.type === "ERROR") {
              expired = true;
              return;
            }
            version = event.object.metadata.resourceVersion || version;
            if (event.type !== "BOOKMARK")
              this.fromServer({ resource, type: event.type, object: event.object });
          },
          this.abort.signal,
        );
        // A watch the server ends at once (or expires again) is not reopened in a tight loop.
        if (Date.now() - began < 1000) await pause(1000, this.abort.signal);
        if (expired && !this.abort.signal.aborted) version = await this.copyAll(resource);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.log(`watching ${resource.plural} on the API server failed (${String(error)}); listing again`);
        await pause(1000, this.abort.signal);
        version = await this.copyAll(resource).catch(() => version);
      }
    }
  }

  private fromServer(news: ServerNews): void {
    const key = keyOf(news.resource, news.object);
    if (this.unsent.get(key)) {
      const held = this.heldBack.get(key);
      if (!held || versionOf(news.object) > versionOf(held.object)) this.heldBack.set(key, news);
      return;
    }
    this.apply(news);
  }

  private apply({ resource, type, object }: ServerNews): void {
    const key = keyOf(resource, object);
    if (versionOf(object) <= (this.copiedVersion.get(key) ?? 0)) return;
    if (type !== "DELETED" && this.writes.wasDeleted(object.metadata.uid)) return;
    this.copiedVersion.set(key, versionOf(object));
    const namespace = object.metadata.namespace ?? "";
    const current = this.store.get(resource, namespace, object.metadata.name);
    if (type === "DELETED") {
      if (current) this.writeFromServer(() => this.store.remove(resource, namespace, object.metadata.name));
      return;
    }
    const { managedFields: _managed, ...metadata } = object.metadata;
    const local = translated({ ...object, metadata }, this.writes.localUid);
    if (!current) this.writeFromServer(() => this.store.insert(resource, local));
    else if (
      JSON.stringify(withoutServerMetadata(current)) !== JSON.stringify(withoutServerMetadata(local))
    ) {
      this.writeFromServer(() => this.store.replace(resource, { ...local, metadata: { ...local.metadata } }));
    }
  }

  private writeFromServer(write: () => unknown): void {
    this.copyingRevision = this.store.currentRevision() + 1;
    try {
      write();
    } finally {
      this.copyingRevision = undefined;
    }
  }

  // --- to the server (the requests themselves are server-writes.ts's) ---

  private onLocalChange(event: StoreEvent): void {
    if (event.revision === this.copyingRevision || !sentKinds.has(event.resource)) return;
    const key = keyOf(event.resource, event.object);
    this.unsent.set(key, (this.unsent.get(key) ?? 0) + 1);
    this.sending = this.sending
      .then(() => this.writes.send(event))
      .catch((error: unknown) => this.log(`sending ${describeEvent(event)} failed: ${String(error)}`))
      .finally(() => {
        const left = (this.unsent.get(key) ?? 1) - 1;
        if (left > 0) this.unsent.set(key, left);
        else {
          this.unsent.delete(key);
          this.settle(key);
        }
      });
  }

  /** Copies in the newest the server said about an object once nothing of it is left to send. */
  private settle(key: string): void {
    const candidates = [this.lastAnswer.get(key), this.heldBack.get(key)].filter(
      (held): held is ServerNews => held !== undefined && mirroredKinds.includes(held.resource),
    );
    this.lastAnswer.delete(key);
    this.heldBack.delete(key);
    const newest = candidates.sort((a, b) => versionOf(b.object) - versionOf(a.object))[0];
    if (newest) this.apply(newest);
  }
}

/** Waits `ms`, or less when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

function describeEvent(event: StoreEvent): string {
  const { namespace, name } = event.object.metadata;
  return `${event.type} of ${event.resource.kind} ${namespace ? `${namespace}/` : ""}${name}`;
}
