// Namespace deletion: a deleted namespace turns Terminating, everything in it is deleted, and the
// namespace goes away once it is empty (its "kubernetes" finalizer is then released).
import type { Registry } from "../apiserver/registry.ts";
import { namespaces, resourceTypes } from "../cluster/resources.ts";
import { ApiError } from "../http/status.ts";
import { WorkQueue } from "./work-queue.ts";

export function startNamespaceController(registry: Registry): () => void {
  const store = registry.store;
  const queue = new WorkQueue("namespace controller", (name) => {
    const namespace = store.get(namespaces, "", name);
    if (!namespace?.metadata.deletionTimestamp) return;
    if ((namespace.status as { phase?: string } | undefined)?.phase !== "Terminating") {
      registry.write(namespaces, { ...namespace, status: { phase: "Terminating" } });
    }
    let remaining = 0;
    for (const type of resourceTypes.filter((candidate) => candidate.namespaced)) {
      for (const object of store.list(type, name)) {
        remaining += 1;
        try {
          registry.delete(type, name, object.metadata.name);
        } catch (error) {
          if (!(error instanceof ApiError && error.code === 404)) throw error;
        }
      }
    }
    if (remaining > 0) return;
    const current = store.get(namespaces, "", name);
    if (current) registry.write(namespaces, { ...current, spec: { finalizers: [] } });
  });
  const unsubscribe = store.subscribe((event) => {
    if (event.resource === namespaces) queue.add(event.object.metadata.name);
    else if (event.type === "DELETED" && event.object.metadata.namespace) {
      const namespace = store.get(namespaces, "", event.object.metadata.namespace);
      if (namespace?.metadata.deletionTimestamp) queue.add(namespace.metadata.name);
    }
  });
  return () => {
    unsubscribe();
    queue.stop();
  };
}
