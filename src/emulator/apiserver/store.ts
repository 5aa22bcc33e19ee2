// Objects by kind, one global revision counter (what clients see as resourceVersion), and a bounded
// history of changes per kind so watches can resume from a recent resourceVersion, like the API
// server's watch cache. Stored objects are never mutated: every change stores a new object.
import type { KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  type: EventType;
  resource: ResourceType;
  /** The new state; for DELETED the last state, stamped with the deletion's resourceVersion. */
  object: KubeObject;
  /** The state before a MODIFIED or DELETED. */
  previous?: KubeObject;
  revision: number;
}

export type StoreListener = (event: StoreEvent) => void;

interface Bucket {
  objects: Map<string, KubeObject>;
  history: StoreEvent[];
  /** Events after this revision are all in `history`; older ones were dropped. */
  historyStart: number;
}

export interface ObjectRef {
  resource: ResourceType;
  namespace: string;
  name: string;
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class ObjectStore {
  private revision = 0;
  private readonly buckets = new Map<string, Bucket>();
  private readonly listeners = new Set<StoreListener>();
  /** owner uid -> dependents, for garbage collection. */
  private readonly dependents = new Map<string, Map<string, ObjectRef>>();
  private readonly pending: StoreEvent[] = [];
  private dispatching = false;

  constructor(private readonly historyLimit: number) {}

  currentRevision(): number {
    return this.revision;
  }

  get(resource: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.bucket(resource).objects.get(objectKey(resource.namespaced ? namespace : "", name));
  }

  /** All objects of a kind (in one namespace when given), sorted by namespace and name like etcd keys. */
  list(resource: ResourceType, namespace?: string): KubeObject[] {
    const all = [...this.bucket(resource).objects.entries()];
    const selected = namespace ? all.filter(([, object]) => object.metadata.namespace === namespace) : all;
    selected.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return selected.map(([, object]) => object);
  }

  count(resource: ResourceType): number {
    return this.bucket(resource).objects.size;
  }

  insert(resource: ResourceType, object: KubeObject): KubeObject {
    const stored = this.stamp(object);
    this.bucket(resource).objects.set(objectKey(stored.metadata.namespace, stored.metadata.name), stored);
    this.indexOwners(resource, stored);
    this.record({ type: "ADDED", resource, object: stored, revision: this.revision });
    return stored;
  }

  replace(resource: ResourceType, object: KubeObject): KubeObject {
    const key = objectKey(object.metadata.namespace, object.metadata.name);
    const bucket = this.bucket(resource);
    const previous = bucket.objects.get(key);
    if (!previous) throw new Error(`replace of missing object ${resource.id} ${key}`);
    const stored = this.stamp(object);
    bucket.objects.set(key, stored);
    this.unindexOwners(resource, previous);
    this.indexOwners(resource, stored);
    this.record({ type: "MODIFIED", resource, object: stored, previous, revision: this.revision });
    return stored;
  }

  remove(resource: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const key = objectKey(resource.namespaced ? namespace : "", name);
    const bucket = this.bucket(resource);
    const previous = bucket.objects.get(key);
    if (!previous) return undefined;
    bucket.objects.delete(key);
    this.unindexOwners(resource, previous);
    const last = this.stamp(previous);
    this.record({ type: "DELETED", resource, object: last, previous, revision: this.revision });
    return last;
  }

  /** Events after `revision`, or undefined when that revision is older than the kept history. */
  eventsAfter(resource: ResourceType, revision: number): StoreEvent[] | undefined {
    const bucket = this.bucket(resource);
    if (revision < bucket.historyStart) return undefined;
    return bucket.history.filter((event) => event.revision > revision);
  }

  /** Forgets all history, so every watch from an older resourceVersion gets 410 Expired. */
  compactHistory(): void {
    for (const bucket of this.buckets.values()) {
      bucket.history = [];
      bucket.historyStart = this.revision;
    }
  }

  dependentsOf(ownerUid: string): ObjectRef[] {
    return [...(this.dependents.get(ownerUid)?.values() ?? [])];
  }

  /** Listeners run in commit order; changes made by a listener are delivered after the current event. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private stamp(object: KubeObject): KubeObject {
    this.revision += 1;
    return { ...object, metadata: { ...object.metadata, resourceVersion: String(this.revision) } };
  }

  private record(event: StoreEvent): void {
    const bucket = this.bucket(event.resource);
    bucket.history.push(event);
    if (bucket.history.length > this.historyLimit) {
      const dropped = bucket.history.splice(0, bucket.history.length - this.historyLimit);
      bucket.historyStart = dropped[dropped.length - 1]?.revision ?? bucket.historyStart;
    }
    this.pending.push(event);
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let next = this.pending.shift(); next; next = this.pending.shift()) {
        for (const listener of this.listeners) {
          try {
            listener(next);
          } catch (error) {
            // One failing listener must not starve the others or fail the write that triggered it.
            console.error("emulator: store listener failed:", error);
          }
        }
      }
    } finally {
      this.dispatching = false;
    }
  }

  private bucket(resource: ResourceType): Bucket {
    let bucket = this.buckets.get(resource.id);
    if (!bucket) {
      bucket = { objects: new Map(), history: [], historyStart: 0 };
      this.buckets.set(resource.id, bucket);
    }
    return bucket;
  }

  private indexOwners(resource: ResourceType, object: KubeObject): void {
    for (const owner of object.metadata.ownerReferences ?? []) {
      let refs = this.dependents.get(owner.uid);
      if (!refs) {
        refs = new Map();
        this.dependents.set(owner.uid, refs);
      }
      refs.set(`${resource.id}|${object.metadata.namespace ?? ""}|${object.metadata.name}`, {
        resource,
        namespace: object.metadata.namespace ?? "",
        name: object.metadata.name,
      });
    }
  }

  private unindexOwners(resource: ResourceType, object: KubeObject): void {
    for (const owner of object.metadata.ownerReferences ?? []) {
      const refs = this.dependents.get(owner.uid);
      refs?.delete(`${resource.id}|${object.metadata.namespace ?? ""}|${object.metadata.name}`);
      if (refs?.size === 0) this.dependents.delete(owner.uid);
    }
  }
}
