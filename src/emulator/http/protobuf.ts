// kubectl's typed clients send built-in kinds as Kubernetes protobuf: `kubectl auth can-i` posts its
// SelfSubjectAccessReview that way, `kubectl create namespace|secret` their objects. This reads just
// those kinds into their JSON shape (responses stay JSON, which every client accepts). Envelope:
// "k8s\0" + runtime.Unknown{typeMeta=1, raw=2}; field numbers from k8s.io/api's generated.proto.
import { unsupportedMediaType, badRequest } from "./status.ts";

export const protobufMediaType = "application/vnd.kubernetes.protobuf";

type Fields = Map<number, (Buffer | number)[]>;

function readVarint(buffer: Buffer, offset: number): [number, number] {
  let value = 0;
  let shift = 0;
  let position = offset;
  for (;;) {
    const byte = buffer[position];
    if (byte === undefined || shift > 49) throw badRequest("malformed protobuf body");
    value += (byte & 0x7f) * 2 ** shift;
    position += 1;
    if ((byte & 0x80) === 0) return [value, position];
    shift += 7;
  }
}

function readFields(buffer: Buffer): Fields {
  const fields: Fields = new Map();
  let offset = 0;
  while (offset < buffer.length) {
    const [key, afterKey] = readVarint(buffer, offset);
    const number = Math.floor(key / 8);
    const wireType = key % 8;
    let value: Buffer | number;
    if (wireType === 0) {
      [value, offset] = readVarint(buffer, afterKey);
    } else if (wireType === 2) {
      const [length, afterLength] = readVarint(buffer, afterKey);
      if (afterLength + length > buffer.length) throw badRequest("malformed protobuf body");
      value = buffer.subarray(afterLength, afterLength + length);
      offset = afterLength + length;
    } else if (wireType === 1 || wireType === 5) {
      offset = afterKey + (wireType === 1 ? 8 : 4);
      continue;
    } else {
      throw badRequest("malformed protobuf body");
    }
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

function messages(fields: Fields | undefined, number: number): Fields[] {
  return (fields?.get(number) ?? []).filter(Buffer.isBuffer).map(readFields);
}

function message(fields: Fields | undefined, number: number): Fields | undefined {
  return messages(fields, number)[0];
}

function texts(fields: Fields | undefined, number: number): string[] {
  return (fields?.get(number) ?? []).filter(Buffer.isBuffer).map((value) => value.toString("utf8"));
}

function text(fields: Fields | undefined, number: number): string | undefined {
  return texts(fields, number)[0];
}

function bool(fields: Fields | undefined, number: number): boolean | undefined {
  const value = fields?.get(number)?.[0];
  return typeof value === "number" ? value !== 0 : undefined;
}

/** A proto map<string, string|bytes>: repeated entries {key=1, value=2}. */
function map(
  fields: Fields | undefined,
  number: number,
  encode: (value: Buffer) => string,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of messages(fields, number)) {
    const key = text(entry, 1);
    const value = entry.get(2)?.[0];
    if (key !== undefined) result[key] = Buffer.isBuffer(value) ? encode(value) : "";
  }
  return result;
}

function strings(fields: Fields | undefined, names: Record<number, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [number, name] of Object.entries(names)) {
    const value = text(fields, Number(number));
    if (value !== undefined) result[name] = value;
  }
  return result;
}

const utf8 = (value: Buffer): string => value.toString("utf8");
const base64 = (value: Buffer): string => value.toString("base64");

/** The parts of ObjectMeta a client sets on create. */
function objectMeta(fields: Fields | undefined): Record<string, unknown> {
  const metadata: Record<string, unknown> = strings(fields, { 1: "name", 2: "generateName", 3: "namespace" });
  const labels = map(fields, 11, utf8);
  const annotations = map(fields, 12, utf8);
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const owners = messages(fields, 13).map((owner) => {
    const controller = bool(owner, 6);
    const blockOwnerDeletion = bool(owner, 7);
    return {
      ...strings(owner, { 5: "apiVersion", 1: "kind", 3: "name", 4: "uid" }),
      ...(controller !== undefined ? { controller } : {}),
      ...(blockOwnerDeletion !== undefined ? { blockOwnerDeletion } : {}),
    };
  });
  if (owners.length > 0) metadata.ownerReferences = owners;
  const finalizers = texts(fields, 14);
  if (finalizers.length > 0) metadata.finalizers = finalizers;
  return metadata;
}

function selfSubjectAccessReview(review: Fields): Record<string, unknown> {
  const spec = message(review, 2);
  const resourceAttributes = message(spec, 1);
  const nonResourceAttributes = message(spec, 2);
  return {
    spec: {
      ...(resourceAttributes
        ? {
            resourceAttributes: strings(resourceAttributes, {
              1: "namespace",
              2: "verb",
              3: "group",
              4: "version",
              5: "resource",
              6: "subresource",
              7: "name",
            }),
          }
        : {}),
      ...(nonResourceAttributes
        ? { nonResourceAttributes: strings(nonResourceAttributes, { 1: "path", 2: "verb" }) }
        : {}),
    },
  };
}

function secret(fields: Fields): Record<string, unknown> {
  const immutable = bool(fields, 5);
  return {
    metadata: objectMeta(message(fields, 1)),
    data: map(fields, 2, base64),
    ...(text(fields, 3) !== undefined ? { type: text(fields, 3) } : {}),
    stringData: map(fields, 4, utf8),
    ...(immutable !== undefined ? { immutable } : {}),
  };
}

function namespace(fields: Fields): Record<string, unknown> {
  return { metadata: objectMeta(message(fields, 1)) };
}

const decoders: Record<string, (fields: Fields) => Record<string, unknown>> = {
  SelfSubjectAccessReview: selfSubjectAccessReview,
  Secret: secret,
  Namespace: namespace,
};

/** Decodes a protobuf body of one of the kinds kubectl sends that way, into its JSON shape. */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || body.subarray(0, 4).toString("latin1") !== "k8s\0") {
    throw badRequest("the protobuf body lacks the Kubernetes envelope");
  }
  const unknown = readFields(body.subarray(4));
  const typeMeta = message(unknown, 1);
  const kind = text(typeMeta, 2) ?? "";
  const decoder = decoders[kind];
  if (!decoder) throw unsupportedMediaType(protobufMediaType, ["application/json", "application/yaml"]);
  const raw = unknown.get(2)?.[0];
  return {
    apiVersion: text(typeMeta, 1) ?? "",
    kind,
    ...decoder(Buffer.isBuffer(raw) ? readFields(raw) : new Map()),
  };
}
