// Garbage collection by ownerReferences, as kube-controller-manager's garbage collector does it for
// the kinds the emulator holds: when an object is gone, every object naming its uid as an owner is
// deleted too (background propagation; the BFF relies on it for the cloud-init Secret). An owner
// deleted in the foreground (it carries the foregroundDeletion finalizer) has its dependents deleted
// at once, and keeps its finalizer until none of those with blockOwnerDeletion is left
// (garbagecollector.go, processDeletingDependentsItem). Dependents are deleted in the background
// here, where the real collector deletes blocking ones in the foreground in turn.
import { foregroundDeletion, type Registry } from "../apiserver/registry.ts";
import type { KubeObject, OwnerReference } from "../cluster/objects.ts";
import { resourceTypes, type ResourceType } from "../cluster/resources.ts";
import { ApiError } from "../http/status.ts";

function inForegroundDeletion(object: KubeObject): boolean {
  return (
    object.metadata.deletionTimestamp !== undefined &&
    (object.metadata.finalizers ?? []).includes(foregroundDeletion)
  );
}

function kindOf(owner: OwnerReference): ResourceType | undefined {
  const group = owner.apiVersion.includes("/") ? owner.apiVersion.split("/")[0] : "";
  return resourceTypes.find((resource) => resource.kind === owner.kind && resource.group === group);
}

export function startGarbageCollector(registry: Registry): () => void {
  const { store } = registry;

  const deleteDependents = (owner: KubeObject) => {
    for (const dependent of store.dependentsOf(owner.metadata.uid)) {
      try {
        registry.delete(dependent.resource, dependent.namespace, dependent.name);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
  };

  const blocks = (dependent: KubeObject | undefined, ownerUid: string) =>
    dependent?.metadata.ownerReferences?.some(
      (ref) => ref.uid === ownerUid && ref.blockOwnerDeletion === true,
    ) ?? false;

  const finishIfUnblocked = (resource: ResourceType, owner: KubeObject) => {
    const blocking = store
      .dependentsOf(owner.metadata.uid)
      .some((ref) => blocks(store.get(ref.resource, ref.namespace, ref.name), owner.metadata.uid));
    if (!blocking) registry.removeFinalizer(resource, owner, foregroundDeletion);
  };

  return store.subscribe((event) => {
    const { object } = event;
    if (event.type === "DELETED") deleteDependents(object);
    else if (inForegroundDeletion(object) && !(event.previous && inForegroundDeletion(event.previous))) {
      deleteDependents(object);
      finishIfUnblocked(event.resource, object);
    }
    // A dependent gone may be the last one an owner deleted in the foreground waits for.
    if (event.type !== "DELETED") return;
    for (const ref of object.metadata.ownerReferences ?? []) {
      const resource = kindOf(ref);
      const owner = resource && store.get(resource, object.metadata.namespace ?? "", ref.name);
      if (resource && owner?.metadata.uid === ref.uid && inForegroundDeletion(owner))
        finishIfUnblocked(resource, owner);
    }
  });
}
