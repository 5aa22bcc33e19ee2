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
  api: RemoteApi;
  log: (line: string) => void;
}

interface Held {
  resource: ResourceType;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

export class RemoteMirror {
  private readonly store: ObjectStore;
  private readonly api: RemoteApi;
  private readonly log: (line: string) => void;
  private readonly abort = new AbortController();
  /** The local revision of the change being copied in, so it is not sent back. */
  private copyingRevision: number | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly unsent = new Map<string, number>();
  private readonly heldBack = new Map<string, Held>();
  private readonly lastAnswer = new Map<string, Held>();
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
    for (let attempt = 1; answer.status === 429 && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
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
    for (const local of this.store.list(resource)) {
      if (!present.has(keyOf(resource, local)) && !this.unsent.get(keyOf(resource, local))) {
        this.copy(() => this.store.remove(resource, local.metadata.namespace ?? "", local.metadata.name));
      }
    }
    return String(field(answer.body, "metadata", "resourceVersion") ?? "0");
  }

  private async keepWatching(resource: ResourceType, fromVersion: string): Promise<void> {
    let version = fromVersion;
    while (!this.abort.signal.aborted) {
      let expired = false;
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
        if (expired) version = await this.copyAll(resource);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.log(`watching ${resource.plural} on the API server failed (${String(error)}); listing again`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        version = await this.copyAll(resource).catch(() => version);
      }
    }
  }

  private fromServer(news: Held): void {
    const key = keyOf(news.resource, news.object);
    if (this.unsent.get(key)) {
      const held = this.heldBack.get(key);
      if (!held || versionOf(news.object) > versionOf(held.object)) this.heldBack.set(key, news);
      return;
    }
    this.apply(news);
  }

  private apply({ resource, type, object }: Held): void {
    const key = keyOf(resource, object);
    if (versionOf(object) <= (this.copiedVersion.get(key) ?? 0)) return;
    if (type !== "DELETED" && this.deleted.has(object.metadata.uid)) return;
    this.copiedVersion.set(key, versionOf(object));
    const namespace = object.metadata.namespace ?? "";
    const current = this.store.get(resource, namespace, object.metadata.name);
    if (type === "DELETED") {
      if (current) this.copy(() => this.store.remove(resource, namespace, object.metadata.name));
      return;
    }
    const { managedFields: _managed, ...metadata } = object.metadata;
    const local = translated({ ...object, metadata }, this.localUid);
    if (!current) this.copy(() => this.store.insert(resource, local));
    else if (
      JSON.stringify(withoutServerMetadata(current)) !== JSON.stringify(withoutServerMetadata(local))
    ) {
      this.copy(() => this.store.replace(resource, { ...local, metadata: { ...local.metadata } }));
    }
  }

  private copy(write: () => unknown): void {
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
      (held): held is Held => held !== undefined && mirroredKinds.includes(held.resource),
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
    if (main) this.remember(resource, await this.patch(resource, object, main));
    if (!splitStatus) return;
    const status = mergePatch({ status: statusBefore }, { status: statusAfter });
    if (status) this.remember(resource, await this.patch(resource, object, status, "status"));
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
    this.deleted.add(serverUid);
    // As the kubelet confirms a pod's end: without one, a graceful delete would wait forever.
    const body =
      resource === pods ? { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0 } : undefined;
    const answer = await this.api.request(
      "DELETE",
      resourcePath(resource, namespace, object.metadata.name),
      body,
    );
    if (answer.status !== 404)
      this.accepted(answer, `deleting ${resource.kind} ${namespace}/${object.metadata.name}`);
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

function describe(answer: RemoteAnswer): string {
  const message = isJsonObject(answer.body) ? answer.body.message : answer.body;
  return `HTTP ${answer.status}${message ? `: ${String(message)}` : ""}`;
}

function describeEvent(event: StoreEvent): string {
  const { namespace, name } = event.object.metadata;
  return `${event.type} of ${event.resource.kind} ${namespace ? `${namespace}/` : ""}${name}`;
}
