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

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (admission checks the digits). */
function microTime(description: string): SchemaNode {
  return { type: "string", format: "date-time", description };
}

const labelSelector: SchemaNode = {
  $ref: "#/definitions/k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector",
};

const networkPolicyPeer: SchemaNode = {
  description:
    "NetworkPolicyPeer describes a peer to allow traffic to/from. Only certain combinations of fields are allowed",
  type: "object",
  properties: {
    podSelector: labelSelector,
    namespaceSelector: labelSelector,
    ipBlock: {
      description:
        'IPBlock describes a particular CIDR (Ex. "192.168.1.0/24","2001:db8::/64") that is allowed to the pods matched by a NetworkPolicySpec\'s podSelector. The except entry describes CIDRs that should not be included within this rule.',
      type: "object",
      required: ["cidr"],
      properties: {
        cidr: { type: "string", description: "cidr is a string representing the IPBlock" },
        except: { type: "array", items: { type: "string" } },
      },
    },
  },
};

const networkPolicyPort: SchemaNode = {
  description: "NetworkPolicyPort describes a port to allow traffic on",
  type: "object",
  properties: {
    protocol: {
      type: "string",
      description: "protocol represents the protocol (TCP, UDP, or SCTP) which traffic must match.",
    },
    port: { $ref: "#/definitions/k8s.io.apimachinery.pkg.util.intstr.IntOrString" },
    endPort: { type: "integer", format: "int32" },
  },
};

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
  "io.k8s.api.coordination.v1.Lease": {
    description: "Lease defines a lease concept.",
    type: "object",
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      spec: {
        description: "LeaseSpec is a specification of a Lease.",
        type: "object",
        properties: {
          holderIdentity: {
            type: "string",
            description: "holderIdentity contains the identity of the holder of a current lease.",
          },
          leaseDurationSeconds: {
            type: "integer",
            format: "int32",
            description:
              "leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.",
          },
          acquireTime: microTime("acquireTime is a time when the current lease was acquired."),
          renewTime: microTime(
            "renewTime is a time when the current holder of a lease has last updated the lease.",
          ),
          leaseTransitions: {
            type: "integer",
            format: "int32",
            description: "leaseTransitions is the number of transitions of a lease between holders.",
          },
          strategy: {
            type: "string",
            description:
              "Strategy indicates the strategy for picking the leader for coordinated leader election.",
          },
          preferredHolder: {
            type: "string",
            description:
              "PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.",
          },
        },
      },
    },
  },
  "io.k8s.api.networking.v1.NetworkPolicy": {
    description: "NetworkPolicy describes what network traffic is allowed for a set of Pods",
    type: "object",
    properties: {
      ...typeMeta,
      metadata: objectMeta,
      spec: {
        description: "NetworkPolicySpec provides the specification of a NetworkPolicy",
        type: "object",
        properties: {
          podSelector: labelSelector,
          policyTypes: { type: "array", items: { type: "string" } },
          ingress: {
            type: "array",
            items: {
              type: "object",
              properties: {
                from: { type: "array", items: networkPolicyPeer },
                ports: { type: "array", items: networkPolicyPort },
              },
            },
          },
          egress: {
            type: "array",
            items: {
              type: "object",
              properties: {
                to: { type: "array", items: networkPolicyPeer },
                ports: { type: "array", items: networkPolicyPort },
              },
            },
          },
        },
      },
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
