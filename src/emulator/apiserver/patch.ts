// JSON merge patch (RFC 7386) and JSON patch (RFC 6902), the two patch types the API server takes
// for custom resources. kubectl apply sends merge patches for KubeVirt kinds.
import { clone, isJsonObject } from "../cluster/objects.ts";
import { ApiError, badRequest } from "../http/status.ts";

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * A patch that does not apply. The API server answers every error of applying a JSON patch with
 * NewGenericServerResponse(422, ...), whose message is this one alone: the patch library's own words
 * are dropped (k8s.io/apiserver pkg/endpoints/handlers/patch.go applyJSPatch; apimachinery
 * pkg/api/errors NewGenericServerResponse). `why` is for this file's readers only.
 */
function rejected(_why: string): ApiError {
  return new ApiError(422, "Invalid", "the server rejected our request due to an error in our request");
}

function decodePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw rejected(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => deepEqual(item, b[index]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((key) => key in b && deepEqual(a[key], b[key]))
    );
  }
  return false;
}

function arrayIndex(token: string, length: number, forInsert: boolean, pointer: string): number {
  if (forInsert && token === "-") return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw rejected(`invalid array index "${token}" in "${pointer}"`);
  const index = Number(token);
  if (index > length || (!forInsert && index === length)) {
    throw rejected(`array index ${index} out of bounds in "${pointer}"`);
  }
  return index;
}

/** Returns the container holding the pointer's last token. */
function parentOf(document: unknown, tokens: string[], pointer: string): unknown {
  let current = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false, pointer)];
    else if (isJsonObject(current) && token in current) current = current[token];
    else throw rejected(`doc is missing path: "${pointer}"`);
  }
  return current;
}

function getAt(document: unknown, pointer: string): unknown {
  let current = document;
  for (const token of decodePointer(pointer)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false, pointer)];
    else if (isJsonObject(current) && token in current) current = current[token];
    else throw rejected(`doc is missing path: "${pointer}"`);
  }
  return current;
}

function removeAt(document: unknown, pointer: string): unknown {
  const tokens = decodePointer(pointer);
  const last = tokens[tokens.length - 1];
  if (last === undefined) throw rejected("cannot remove the whole document");
  const parent = parentOf(document, tokens, pointer);
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(last, parent.length, false, pointer), 1);
    return removed;
  }
  if (isJsonObject(parent) && last in parent) {
    const removed = parent[last];
    delete parent[last];
    return removed;
  }
  throw rejected(`unable to remove nonexistent key: ${last}: missing value`);
}

function addAt(document: unknown, pointer: string, value: unknown, replace: boolean): unknown {
  const tokens = decodePointer(pointer);
  const last = tokens[tokens.length - 1];
  if (last === undefined) return value;
  const parent = parentOf(document, tokens, pointer);
  if (Array.isArray(parent)) {
    const index = arrayIndex(last, parent.length, !replace, pointer);
    parent.splice(index, replace ? 1 : 0, value);
  } else if (isJsonObject(parent)) {
    if (replace && !(last in parent))
      throw rejected(`replace operation does not apply: doc is missing key: ${pointer}`);
    parent[last] = value;
  } else {
    throw rejected(`doc is missing path: "${pointer}"`);
  }
  return document;
}

/**
 * RFC 6902's test as the API server's patch library (evanphx/json-patch v4, `test`) does it: a member
 * that is missing, or null, equals null, so `{"op":"test","path":"/metadata/deletionTimestamp",
 * "value":null}` holds exactly while an object is not being deleted; a missing parent fails.
 */
function testAt(document: unknown, pointer: string, expected: unknown): void {
  const tokens = decodePointer(pointer);
  const last = tokens[tokens.length - 1];
  let actual: unknown = document;
  if (last !== undefined) {
    const parent = parentOf(document, tokens, pointer);
    if (Array.isArray(parent)) actual = parent[arrayIndex(last, parent.length, false, pointer)];
    else if (isJsonObject(parent)) actual = parent[last] ?? null;
    else throw rejected(`test operation does not apply: is missing path: ${pointer}`);
  }
  if (!deepEqual(actual, expected)) throw rejected(`testing value ${pointer} failed`);
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parseOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw badRequest("json patch must be an array of operations");
  return patch.map((operation) => {
    if (!isJsonObject(operation) || typeof operation.op !== "string" || typeof operation.path !== "string") {
      throw rejected('json patch operations need string fields "op" and "path"');
    }
    return operation as unknown as Operation;
  });
}

export function jsonPatch(target: unknown, patch: unknown): unknown {
  let document = clone(target);
  for (const operation of parseOperations(patch)) {
    const needsValue = ["add", "replace", "test"].includes(operation.op);
    if (needsValue && !("value" in operation)) throw rejected(`missing value for operation ${operation.op}`);
    switch (operation.op) {
      case "add":
        document = addAt(document, operation.path, clone(operation.value), false);
        break;
      case "replace":
        document = addAt(document, operation.path, clone(operation.value), true);
        break;
      case "remove":
        removeAt(document, operation.path);
        break;
      case "move": {
        if (operation.from === undefined) throw rejected("missing from for operation move");
        const value = removeAt(document, operation.from);
        document = addAt(document, operation.path, value, false);
        break;
      }
      case "copy": {
        if (operation.from === undefined) throw rejected("missing from for operation copy");
        document = addAt(document, operation.path, clone(getAt(document, operation.from)), false);
        break;
      }
      case "test":
        testAt(document, operation.path, operation.value);
        break;
      default:
        throw rejected(`unexpected kind: ${operation.op}`);
    }
  }
  return document;
}
