// How the mirror holds the two sides' objects side by side: one key per object whatever its uid,
// versions compared as the numbers both stores count up, the metadata only a server writes left out
// when the rest is compared or sent, and uids swapped for their counterparts on the other side.
import { isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";

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

export function keyOf(resource: ResourceType, object: KubeObject): string {
  return `${resource.id}|${object.metadata.namespace ?? ""}|${object.metadata.name}`;
}

export function versionOf(object: KubeObject): number {
  return Number(object.metadata.resourceVersion) || 0;
}

export function withoutServerMetadata(object: KubeObject): JsonObject {
  const metadata: JsonObject = { ...object.metadata };
  for (const name of serverMetadata) delete metadata[name];
  return { ...object, metadata };
}

export function isKubeObject(value: unknown): value is KubeObject {
  return isJsonObject(value) && isJsonObject(value.metadata) && value.kind !== "Status";
}

/** Every string equal to a key of `map` replaced by its value, everywhere in `value`. */
export function translated<T>(value: T, map: Map<string, string>): T {
  if (map.size === 0) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return map.get(item) ?? item;
    if (Array.isArray(item)) return item.map(walk);
    if (isJsonObject(item)) return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, walk(v)]));
    return item;
  };
  return walk(value) as T;
}
