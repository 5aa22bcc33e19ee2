// The shape every stored object shares. Objects are kept as parsed JSON; only metadata is typed,
// because the emulator reads kind-specific fields through small accessors where it needs them.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  generateName?: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestamp(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Reads a nested field without assuming the path exists. */
export function field(object: unknown, ...path: (string | number)[]): unknown {
  let current: unknown = object;
  for (const key of path) {
    if (typeof key === "number") {
      if (!Array.isArray(current)) return undefined;
      current = current[key];
    } else {
      if (!isJsonObject(current)) return undefined;
      current = current[key];
    }
  }
  return current;
}

export function stringField(object: unknown, ...path: (string | number)[]): string | undefined {
  const value = field(object, ...path);
  return typeof value === "string" ? value : undefined;
}
