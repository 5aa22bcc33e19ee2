// The emulator's controllers beside a real API server (`--apiserver`): the kinds they read are
// listed and watched there and copied into the emulator's own store, and every change the
// controllers make in that store is sent back as the matching request (create, merge patch, status
// patch, binding, delete). The controllers keep working on a local store with synchronous writes,
// as they do when the emulator is the API server; this module is the only part that knows the
// difference.
//
// Three things keep the two sides consistent:
// - Changes are sent one at a time in the order they happened, so a pod's owner exists on the server
//   before the pod that names it.
// - While changes to an object are on their way, what the watch says about that object is held back
//   (it may predate them) and the newest of it and the server's last answer is copied in afterwards.
// - The server gives objects the emulator creates their own uids. References are translated both
//   ways (owner references, the launcher pod's created-by label), so the controllers keep the uids
//   they know and the server's objects point at the server's uids.
import { field, isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
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
import { mergePatch } from "./merge-patch.ts";
import { resourcePath, type RemoteAnswer, type RemoteApi, type WatchEvent } from "./remote-api.ts";

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

// Set by the server, never sent: metadata a client does not write.
const serverMetadata = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "generation",
  "managedFields",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
];

function keyOf(resource: ResourceType, object: KubeObject): string {
  return `${resource.id}|${object.metadata.namespace ?? ""}|${object.metadata.name}`;
}

function versionOf(object: KubeObject): number {
  return Number(object.metadata.resourceVersion) || 0;
}

function withoutServerMetadata(object: KubeObject): JsonObject {
  const metadata: JsonObject = { ...object.metadata };
  for (const name of serverMetadata) delete metadata[name];
  return { ...object, metadata };
}

function isKubeObject(value: unknown): value is KubeObject {
  return isJsonObject(value) && isJsonObject(value.metadata) && value.kind !== "Status";
}

/** Every string equal to a key of `map` replaced by its value, everywhere in `value`. */
function translated<T>(value: T, map: Map<string, string>): T {
  if (map.size === 0) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return map.get(item) ?? item;
    if (Array.isArray(item)) return item.map(walk);
    if (isJsonObject(item)) return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, walk(v)]));
    return item;
  };
  return walk(value) as T;
}

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
  private readonly serverUid = new Map<string, string>();
  private readonly localUid = new Map<string, string>();
  /** Server uids of objects deleted here: late news of them must not bring them back. */
  private readonly deleted = new Set<string>();
  private readonly watches: Promise<void>[] = [];
  private unsubscribe: (() => void) | undefined;

  constructor(options: RemoteMirrorOptions) {
    this.store = options.store;
    this.api = options.api;
    this.log = options.log;
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
      throw new Error(`listing ${resource.plural} on the API server failed: ${describe(answer)}`);
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
    if (type !== "DELETED" && this.deleted.has(object.metadata.uid)) return;
    this.copiedVersion.set(key, versionOf(object));
    const namespace = object.metadata.namespace ?? "";
    const current = this.store.get(resource, namespace, object.metadata.name);
    if (type === "DELETED") {
      if (current) this.writeFromServer(() => this.store.remove(resource, namespace, object.metadata.name));
      return;
    }
    const { managedFields: _managed, ...metadata } = object.metadata;
    const local = translated({ ...object, metadata }, this.localUid);
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

  // --- to the server ---

  private onLocalChange(event: StoreEvent): void {
    if (event.revision === this.copyingRevision || !sentKinds.has(event.resource)) return;
    const key = keyOf(event.resource, event.object);
    this.unsent.set(key, (this.unsent.get(key) ?? 0) + 1);
    this.sending = this.sending
      .then(() => this.send(event))
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

  private async send(event: StoreEvent): Promise<void> {
    const { resource, object } = event;
    if (event.type === "ADDED") return this.sendCreate(resource, object);
    if (event.type === "DELETED") return this.sendDelete(resource, object);
    const previous = event.previous ?? object;
    if (object.metadata.deletionTimestamp && !previous.metadata.deletionTimestamp) {
      return this.sendDelete(resource, object);
    }
    await this.sendChange(resource, previous, object);
  }

  private async sendCreate(resource: ResourceType, object: KubeObject): Promise<void> {
    const namespace = object.metadata.namespace ?? "";
    const body = translated(withoutServerMetadata(object), this.serverUid);
    let answer = await this.api.request("POST", resourcePath(resource, namespace), body);
    if (answer.status === 409 && resource === namespaces) return;
    // Made on the server meanwhile (by another writer, or by a create whose answer was lost): that
    // object is the one the controllers' changes now go to.
    if (answer.status === 409)
      answer = await this.api.request("GET", resourcePath(resource, namespace, object.metadata.name));
    if (!this.accepted(answer, `creating ${resource.kind} ${namespace}/${object.metadata.name}`)) return;
    const created = answer.body as KubeObject;
    this.serverUid.set(object.metadata.uid, created.metadata.uid);
    this.localUid.set(created.metadata.uid, object.metadata.uid);
    if (resource.hasStatusSubresource && isJsonObject(object.status) && resource !== namespaces) {
      const status = translated(object.status, this.serverUid);
      answer = await this.patch(resource, object, { status }, "status");
    }
    this.remember(resource, answer);
  }

  private async sendChange(resource: ResourceType, previous: KubeObject, object: KubeObject): Promise<void> {
    const before = translated(withoutServerMetadata(previous), this.serverUid);
    const after = translated(withoutServerMetadata(object), this.serverUid);
    const { status: statusBefore, ...mainBefore } = before;
    const { status: statusAfter, ...mainAfter } = after;
    if (resource === pods) {
      const node = field(after, "spec", "nodeName");
      if (typeof node === "string" && field(before, "spec", "nodeName") !== node)
        await this.bind(object, node);
      delete mainBefore.spec;
      delete mainAfter.spec;
    }
    const splitStatus = resource.hasStatusSubresource;
    const main = mergePatch(splitStatus ? mainBefore : before, splitStatus ? mainAfter : after);
    const finalizers = isJsonObject(main?.metadata) && "finalizers" in main.metadata;
    if (main && finalizers) {
      await this.sendFinalizers(resource, object, field(before, "metadata", "finalizers"));
      delete (main.metadata as JsonObject).finalizers;
      if (Object.keys(main.metadata as JsonObject).length === 0) delete main.metadata;
    }
    if (main && Object.keys(main).length > 0)
      this.remember(resource, await this.patch(resource, object, main));
    if (!splitStatus) return;
    const status = mergePatch({ status: statusBefore }, { status: statusAfter });
    if (status) this.remember(resource, await this.patch(resource, object, status, "status"));
  }

  /**
   * Finalizers are a list another writer changes too (the API server adds foregroundDeletion): they
   * are replaced only if the server still has what this change started from. If it does not, the
   * watch brings the server's list and the controllers decide again.
   */
  private async sendFinalizers(resource: ResourceType, object: KubeObject, before: unknown): Promise<void> {
    const path = resourcePath(resource, object.metadata.namespace ?? "", object.metadata.name);
    const patch = [
      // The server stores no empty list: [] there is a missing member, which `test` takes as null.
      {
        op: "test",
        path: "/metadata/finalizers",
        value: Array.isArray(before) && before.length > 0 ? before : null,
      },
      { op: "add", path: "/metadata/finalizers", value: object.metadata.finalizers ?? [] },
    ];
    const answer = await this.api.request("PATCH", path, patch, "application/json-patch+json");
    if (answer.status === 422) {
      this.log(
        `${resource.kind} ${object.metadata.name}'s finalizers changed on the server meanwhile; left to its controller`,
      );
      return;
    }
    this.remember(resource, answer);
  }

  private async bind(pod: KubeObject, node: string): Promise<void> {
    const namespace = pod.metadata.namespace ?? "";
    const binding = {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: pod.metadata.name, namespace },
      target: { apiVersion: "v1", kind: "Node", name: node },
    };
    const answer = await this.api.request(
      "POST",
      resourcePath(pods, namespace, pod.metadata.name, "binding"),
      binding,
    );
    this.accepted(answer, `binding pod ${namespace}/${pod.metadata.name} to ${node}`);
  }

  private async sendDelete(resource: ResourceType, object: KubeObject): Promise<void> {
    const namespace = object.metadata.namespace ?? "";
    const serverUid = this.serverUid.get(object.metadata.uid) ?? object.metadata.uid;
    const body = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      // Only this object: a new one of the same name (a restart's next VMI) is not this delete's.
      preconditions: { uid: serverUid },
      // As the kubelet confirms a pod's end: without one, a graceful delete would wait forever.
      ...(resource === pods ? { gracePeriodSeconds: 0 } : {}),
    };
    const answer = await this.api.request(
      "DELETE",
      resourcePath(resource, namespace, object.metadata.name),
      body,
    );
    if (
      answer.status === 404 ||
      this.accepted(answer, `deleting ${resource.kind} ${namespace}/${object.metadata.name}`)
    ) {
      this.deleted.add(serverUid);
    }
  }

  private patch(
    resource: ResourceType,
    object: KubeObject,
    patch: JsonObject,
    subresource?: string,
  ): Promise<RemoteAnswer> {
    const path = resourcePath(resource, object.metadata.namespace ?? "", object.metadata.name, subresource);
    return this.api.request("PATCH", path, patch, "application/merge-patch+json");
  }

  private remember(resource: ResourceType, answer: RemoteAnswer): void {
    if (answer.status === 404) return;
    if (!this.accepted(answer, `changing a ${resource.kind}`)) return;
    if (!isKubeObject(answer.body)) return;
    const object = answer.body;
    this.lastAnswer.set(keyOf(resource, object), { resource, type: "MODIFIED", object });
  }

  private accepted(answer: RemoteAnswer, what: string): boolean {
    if (answer.status >= 200 && answer.status < 300) return true;
    this.log(`the API server refused ${what}: ${describe(answer)}`);
    return false;
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

function describe(answer: RemoteAnswer): string {
  const message = isJsonObject(answer.body) ? answer.body.message : answer.body;
  return `HTTP ${answer.status}${message ? `: ${String(message)}` : ""}`;
}

function describeEvent(event: StoreEvent): string {
  const { namespace, name } = event.object.metadata;
  return `${event.type} of ${event.resource.kind} ${namespace ? `${namespace}/` : ""}${name}`;
}
