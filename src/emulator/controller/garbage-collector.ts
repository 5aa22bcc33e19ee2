// Garbage collection by ownerReferences: when an object is gone, every object naming its uid as an
// owner is deleted too (background propagation). The BFF relies on this for the cloud-init Secret.
import type { Registry } from "../apiserver/registry.ts";
import { ApiError } from "../http/status.ts";

export function startGarbageCollector(registry: Registry): () => void {
  return registry.store.subscribe((event) => {
    if (event.type !== "DELETED") return;
    for (const dependent of registry.store.dependentsOf(event.object.metadata.uid)) {
      try {
        registry.delete(dependent.resource, dependent.namespace, dependent.name);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
  });
}
