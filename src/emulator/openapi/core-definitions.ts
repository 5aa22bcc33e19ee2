// Schemas (Swagger 2.0 definitions, like KubeVirt's) for the core Kubernetes kinds the emulator
// serves. Only what Lab Console writes is spelled out; kinds clients cannot write keep their spec
// and status open.
import type { SchemaNode } from "./schema-node.ts";

const objectMeta: SchemaNode = { $ref: "#/definitions/k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta" };
const typeMeta: Record<string, SchemaNode> = {
  apiVersion: {
    type: "string",
    description: "APIVersion defines the versioned schema of this representation of an object.",
  },
  kind: {
    type: "string",
    description: "Kind is a string value representing the REST resource this object represents.",
  },
};
const open: SchemaNode = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
const stringMap: SchemaNode = { type: "object", additionalProperties: { type: "string" } };

export const coreDefinitions: Record<string, SchemaNode> = {
  "io.k8s.api.core.v1.Namespace": {
    description: "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
    type: "object",
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      spec: {
        type: "object",
        properties: { finalizers: { type: "array", items: { type: "string" } } },
      },
      status: {
        type: "object",
        properties: {
          phase: { type: "string" },
          conditions: { type: "array", items: open },
        },
      },
    },
  },
  "io.k8s.api.core.v1.Secret": {
    description:
      "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
    type: "object",
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      data: { type: "object", additionalProperties: { type: "string", format: "byte" } },
      stringData: stringMap,
      type: { type: "string", description: "Used to facilitate programmatic handling of secret data." },
      immutable: { type: "boolean" },
    },
  },
  "io.k8s.api.core.v1.Pod": {
    description:
      "Pod is a collection of containers that can run on a host. The emulator creates virt-launcher pods; clients can only read them.",
    type: "object",
    properties: { ...typeMeta, metadata: objectMeta, spec: open, status: open },
  },
  "io.k8s.api.core.v1.Node": {
    description: "Node is a worker node in Kubernetes.",
    type: "object",
    properties: { ...typeMeta, metadata: objectMeta, spec: open, status: open },
  },
  "io.k8s.api.core.v1.Event": {
    description: "Event is a report of an event somewhere in the cluster.",
    type: "object",
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      involvedObject: open,
      reason: { type: "string" },
      message: { type: "string" },
      type: { type: "string" },
      count: { type: "integer", format: "int32" },
      firstTimestamp: { type: "string", format: "date-time" },
      lastTimestamp: { type: "string", format: "date-time" },
      source: open,
      reportingComponent: { type: "string" },
      reportingInstance: { type: "string" },
    },
  },
  "io.k8s.api.authorization.v1.SelfSubjectAccessReview": {
    description: "SelfSubjectAccessReview checks whether or the current user can perform an action.",
    type: "object",
    required: ["spec"],
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      spec: {
        type: "object",
        properties: {
          resourceAttributes: {
            type: "object",
            properties: {
              namespace: { type: "string" },
              verb: { type: "string" },
              group: { type: "string" },
              version: { type: "string" },
              resource: { type: "string" },
              subresource: { type: "string" },
              name: { type: "string" },
            },
          },
          nonResourceAttributes: {
            type: "object",
            properties: { path: { type: "string" }, verb: { type: "string" } },
          },
        },
      },
      status: {
        type: "object",
        properties: {
          allowed: { type: "boolean" },
          denied: { type: "boolean" },
          reason: { type: "string" },
          evaluationError: { type: "string" },
        },
      },
    },
  },
};
