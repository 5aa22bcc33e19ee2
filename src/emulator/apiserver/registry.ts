// Object semantics on top of the store, as the API server's generic registry applies them: server-set
// metadata, optimistic concurrency, generation, the status subresource split, finalizers and
// graceful deletion. REST handlers and the emulated controllers both write through here.
import { randomUUID } from "node:crypto";
import { clone, timestamp, type JsonObject, type KubeObject, type ObjectMeta } from "../cluster/objects.ts";
import { apiVersionOf, isCustomResource, namespaces, type ResourceType } from "../cluster/resources.ts";
import { alreadyExists, conflict, forbidden, invalid, notFound, staleObjectMessage } from "../http/status.ts";
import type { ObjectStore } from "./store.ts";

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Foreground keeps the object, marked foregroundDeletion, until the garbage collector has its dependents. */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
}

/** The finalizer a foreground delete adds; the garbage collector removes it (garbage-collector.ts). */
export const foregroundDeletion = "foregroundDeletion";

export interface WriteOptions {
  /** Validate and compute the result without storing it (dryRun=All). */
  dryRun?: boolean;
}

export interface CreateOptions extends WriteOptions {
  /** Controllers create objects with their status; clients cannot (it belongs to the status subresource). */
  keepStatus?: boolean;
}

// Kubernetes' generateName suffix alphabet: no vowels, no look-alikes.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

export function generateNameSuffix(): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)];
  return suffix;
}

// Custom resources track spec changes in metadata.generation; the built-in kinds emulated here do not.
function tracksGeneration(resource: ResourceType): boolean {
  return isCustomResource(resource);
}

// The parts of an object that count as its spec for metadata.generation.
function specPart(resource: ResourceType, object: JsonObject): string {
  const { metadata: _metadata, status, ...rest } = object;
  return JSON.stringify(resource.hasStatusSubresource ? rest : { ...rest, status });
}

/** Namespaces also wait for spec.finalizers (the namespace controller's "kubernetes"). */
function hasFinalizers(object: KubeObject): boolean {
  const specFinalizers = (object.spec as { finalizers?: unknown[] } | undefined)?.finalizers ?? [];
  return (object.metadata.finalizers?.length ?? 0) > 0 || specFinalizers.length > 0;
}

function withoutResourceVersion(object: KubeObject): string {
  const { resourceVersion: _rv, ...metadata } = object.metadata;
  return JSON.stringify({ ...object, metadata });
}

export class Registry {
  constructor(readonly store: ObjectStore) {}

  get(resource: ResourceType, namespace: string, name: string): KubeObject {
    const object = this.store.get(resource, namespace, name);
    if (!object) throw notFound(resource, name);
    return object;
  }

  find(resource: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.store.get(resource, namespace, name);
  }

  /** Fails unless the namespace exists and is not being deleted. */
  requireNamespace(namespace: string, forCreate: boolean): void {
    const found = this.store.get(namespaces, "", namespace);
    if (!found) throw notFound(namespaces, namespace);
    if (forCreate && found.metadata.deletionTimestamp) {
      throw forbidden(
        `unable to create new content in namespace ${namespace} because it is being terminated`,
        { name: namespace, kind: "namespaces" },
      );
    }
  }

  create(resource: ResourceType, input: JsonObject, options: CreateOptions = {}): KubeObject {
    const given = (input.metadata ?? {}) as Partial<ObjectMeta>;
    const namespace = resource.namespaced ? (given.namespace ?? "") : undefined;
    if (namespace !== undefined) this.requireNamespace(namespace, true);

    let name = given.name ?? "";
    if (name === "" && given.generateName) {
      do name = `${given.generateName}${generateNameSuffix()}`;
      while (this.store.get(resource, namespace ?? "", name));
    }
    if (name === "") {
      throw invalid({ kind: resource.kind, group: resource.group }, "", [
        {
          reason: "FieldValueRequired",
          message: "Required value: name or generateName is required",
          field: "metadata.name",
        },
      ]);
    }
    if (this.store.get(resource, namespace ?? "", name)) throw alreadyExists(resource, name);

    const metadata: ObjectMeta = {
      ...given,
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      uid: randomUUID(),
      resourceVersion: "",
      creationTimestamp: timestamp(),
      ...(tracksGeneration(resource) ? { generation: 1 } : {}),
    };
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    if (namespace === undefined) delete metadata.namespace;

    const object: KubeObject = {
      ...clone(input),
      apiVersion: apiVersionOf(resource),
      kind: resource.kind,
      metadata,
    };
    // With a status subresource, status is the controllers' to set.
    if (resource.hasStatusSubresource && !options.keepStatus) delete object.status;
    // The namespace strategy: every new namespace starts Active.
    if (resource === namespaces && !options.keepStatus) object.status = { phase: "Active" };
    if (options.dryRun)
      return { ...object, metadata: { ...metadata, resourceVersion: String(this.store.currentRevision()) } };
    return this.store.insert(resource, object);
  }

  /**
   * Replaces an object. A given metadata.resourceVersion must match the stored one (409 otherwise);
   * custom resources require it. `status` writes only status, main writes keep the stored status.
   */
  update(
    resource: ResourceType,
    input: JsonObject,
    options: WriteOptions & { subresource?: "status"; requireResourceVersion?: boolean } = {},
  ): KubeObject {
    const given = (input.metadata ?? {}) as Partial<ObjectMeta>;
    const namespace = resource.namespaced ? (given.namespace ?? "") : "";
    const name = given.name ?? "";
    const current = this.get(resource, namespace, name);
    if (given.resourceVersion) {
      if (given.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(resource, name, staleObjectMessage);
      }
    } else if (options.requireResourceVersion) {
      throw invalid({ kind: resource.kind, group: resource.group }, name, [
        {
          reason: "FieldValueInvalid",
          message: "Invalid value: 0x0: must be specified for an update",
          field: "metadata.resourceVersion",
        },
      ]);
    }

    let next: KubeObject;
    if (options.subresource === "status") {
      next = { ...current, status: clone(input.status) };
      if (input.status === undefined) delete next.status;
    } else {
      const metadata: ObjectMeta = {
        ...clone(given),
        name: current.metadata.name,
        uid: current.metadata.uid,
        resourceVersion: current.metadata.resourceVersion,
        creationTimestamp: current.metadata.creationTimestamp,
      } as ObjectMeta;
      if (current.metadata.namespace !== undefined) metadata.namespace = current.metadata.namespace;
      else delete metadata.namespace;
      delete metadata.deletionTimestamp;
      delete metadata.deletionGracePeriodSeconds;
      if (current.metadata.deletionTimestamp) {
        metadata.deletionTimestamp = current.metadata.deletionTimestamp;
        if (current.metadata.deletionGracePeriodSeconds !== undefined) {
          metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
        }
      }
      next = { ...clone(input), apiVersion: current.apiVersion, kind: current.kind, metadata } as KubeObject;
      if (resource.hasStatusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = current.status;
      }
    }
    return this.commit(resource, current, next, options);
  }

  /**
   * Deletes an object: at once when it has no finalizers, otherwise by marking it (deletionTimestamp)
   * until the last finalizer is removed. Returns the object as the API server does.
   */
  delete(
    resource: ResourceType,
    namespace: string,
    name: string,
    options: DeleteOptions & WriteOptions = {},
  ): KubeObject {
    const current = this.get(resource, namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== current.metadata.uid) {
      throw conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const finalizers = current.metadata.finalizers ?? [];
    const foreground = options.propagationPolicy === "Foreground" && !finalizers.includes(foregroundDeletion);
    if (hasFinalizers(current) || foreground) {
      if (current.metadata.deletionTimestamp) return current;
      const marked: KubeObject = {
        ...current,
        metadata: {
          ...current.metadata,
          ...(foreground ? { finalizers: [...finalizers, foregroundDeletion] } : {}),
          deletionTimestamp: timestamp(),
          deletionGracePeriodSeconds: 0,
        },
      };
      // The namespace registry reports the namespace Terminating in the delete response already.
      if (resource === namespaces)
        marked.status = { ...(current.status as JsonObject | undefined), phase: "Terminating" };
      if (options.dryRun) return marked;
      return this.store.replace(resource, marked);
    }
    if (options.dryRun) return current;
    return this.store.remove(resource, current.metadata.namespace ?? "", name) ?? current;
  }

  /** Removes one finalizer; the object goes away if it was being deleted and none remain. */
  removeFinalizer(resource: ResourceType, object: KubeObject, finalizer: string): void {
    const current = this.store.get(resource, object.metadata.namespace ?? "", object.metadata.name);
    if (!current?.metadata.finalizers?.includes(finalizer)) return;
    const finalizers = current.metadata.finalizers.filter((item) => item !== finalizer);
    const next: KubeObject = { ...current, metadata: { ...current.metadata, finalizers } };
    if (finalizers.length === 0) delete next.metadata.finalizers;
    this.commit(resource, current, next, {});
  }

  /** Controller-side write of a whole object, without optimistic concurrency. */
  write(resource: ResourceType, next: KubeObject): KubeObject {
    const current = this.get(resource, next.metadata.namespace ?? "", next.metadata.name);
    return this.commit(resource, current, { ...next, metadata: { ...next.metadata } }, {});
  }

  private commit(
    resource: ResourceType,
    current: KubeObject,
    next: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    next.metadata.generation = current.metadata.generation;
    if (next.metadata.generation === undefined) delete next.metadata.generation;
    if (withoutResourceVersion(next) === withoutResourceVersion(current)) return current;
    // Controllers' spec writes (start/stop flipping runStrategy) count as much as clients' do.
    if (tracksGeneration(resource) && specPart(resource, next) !== specPart(resource, current)) {
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    if (options.dryRun) return next;
    const stored = this.store.replace(resource, next);
    if (stored.metadata.deletionTimestamp && !hasFinalizers(stored)) {
      return this.store.remove(resource, stored.metadata.namespace ?? "", stored.metadata.name) ?? stored;
    }
    return stored;
  }
}
