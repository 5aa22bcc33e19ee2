// The JSON merge patch (RFC 7386) that turns one version of an object into the next: what the
// emulator sends the real API server for a change its controllers made locally. Objects are compared
// key by key; a removed key becomes null; arrays and scalars that differ are sent whole, as RFC 7386
// has no way to change part of an array.
import { isJsonObject, type JsonObject } from "../cluster/objects.ts";

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The merge patch from `before` to `after`, or undefined when they are equal. */
export function mergePatch(before: JsonObject, after: JsonObject): JsonObject | undefined {
  const patch: JsonObject = {};
  for (const key of Object.keys(before)) {
    if (!(key in after)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (same(old, value)) continue;
    if (isJsonObject(old) && isJsonObject(value)) {
      const nested = mergePatch(old, value);
      if (nested) patch[key] = nested;
    } else {
      patch[key] = value;
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
