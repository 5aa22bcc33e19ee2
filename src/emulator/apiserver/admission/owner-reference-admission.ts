// The OwnerReferencesPermissionEnforcement admission plugin (Kubernetes
// plugin/pkg/admission/gc/gc_admission.go), on in OpenShift and CIS-hardened clusters. Whoever sets or
// changes an object's ownerReferences must be allowed to delete that object, since the garbage
// collector will delete it on their behalf; whoever sets blockOwnerDeletion must also be allowed to
// update the owner's finalizers, since it holds up the owner's deletion.
import { isJsonObject, type JsonObject } from "../../cluster/objects.ts";
import { resourceTypes, type ResourceType } from "../../cluster/resources.ts";
import { forbidden, qualifiedResource } from "../../http/status.ts";
import type { Authorizer, ResourceAttributes, UserInfo } from "../../rbac/attributes.ts";
import { goQuote } from "../../rbac/go-quote.ts";

export const ownerReferencesPlugin = "OwnerReferencesPermissionEnforcement";

interface OwnerReference {
  apiVersion?: unknown;
  kind?: unknown;
  name?: unknown;
  uid?: unknown;
  blockOwnerDeletion?: unknown;
}

export interface OwnerReferenceWrite {
  user: UserInfo;
  resource: ResourceType;
  subresource: string;
  namespace: string;
  object: JsonObject;
  /** The stored object for an update; undefined for a create. */
  old?: JsonObject;
}

/** Throws the API server's 403 when the writer may not set the object's new owner references. */
export function enforceOwnerReferencePermissions(authorizer: Authorizer, write: OwnerReferenceWrite): void {
  const { user, resource, subresource, namespace, object, old } = write;
  // The plugin's one exception: pods/status, whose strategy cannot change ownerReferences anyway.
  if (resource.group === "" && resource.plural === "pods" && subresource === "status") return;
  const references = ownerReferencesOf(object);
  if (!changesOwnerReferences(references, old === undefined ? undefined : ownerReferencesOf(old))) return;

  const name = nameOf(object);
  const deleteSelf: ResourceAttributes = {
    kind: "resource",
    verb: "delete",
    apiGroup: resource.group,
    resource: resource.plural,
    subresource,
    namespace,
    name,
  };
  const self = authorizer.authorize(user, deleteSelf);
  if (!self.allowed) {
    throw refusal(
      resource,
      name,
      `cannot set an ownerRef on a resource you can't delete: ${self.reason}, <nil>`,
    );
  }

  for (const reference of newlyBlocking(references, old === undefined ? [] : ownerReferencesOf(old))) {
    const owners = ownerResources(reference);
    const apiVersion = String(reference.apiVersion ?? "");
    const kind = String(reference.kind ?? "");
    if (owners.length === 0) {
      throw refusal(
        resource,
        name,
        `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${apiVersion} Kind ${kind}: ${self.reason}, no matches for kind ${goQuote(kind)} in version ${goQuote(apiVersion)}`,
      );
    }
    for (const owner of owners) {
      const decision = authorizer.authorize(user, {
        kind: "resource",
        verb: "update",
        apiGroup: owner.group,
        resource: owner.plural,
        subresource: "finalizers",
        namespace,
        name: String(reference.name ?? ""),
      });
      if (!decision.allowed) {
        throw refusal(
          resource,
          name,
          `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${decision.reason}, <nil>`,
        );
      }
    }
  }
}

function ownerReferencesOf(object: JsonObject): OwnerReference[] {
  const metadata = object.metadata;
  const references = isJsonObject(metadata) ? metadata.ownerReferences : undefined;
  return Array.isArray(references) ? (references.filter(isJsonObject) as OwnerReference[]) : [];
}

function nameOf(object: JsonObject): string {
  const metadata = object.metadata;
  return isJsonObject(metadata) && typeof metadata.name === "string" ? metadata.name : "";
}

/** A create sets references when it has any; an update when they differ from the stored ones. */
function changesOwnerReferences(next: OwnerReference[], previous: OwnerReference[] | undefined): boolean {
  if (previous === undefined) return next.length > 0;
  return JSON.stringify(next.map(canonical)) !== JSON.stringify(previous.map(canonical));
}

function canonical(reference: OwnerReference): unknown {
  return Object.fromEntries(Object.entries(reference).sort(([a], [b]) => a.localeCompare(b)));
}

/** References that block their owner's deletion and did not before (matched by uid). */
function newlyBlocking(next: OwnerReference[], previous: OwnerReference[]): OwnerReference[] {
  const before = new Map(previous.map((reference) => [reference.uid, reference]));
  return next.filter(
    (reference) =>
      reference.blockOwnerDeletion === true && before.get(reference.uid)?.blockOwnerDeletion !== true,
  );
}

/** The REST mapping of an owner's kind; a kind the API does not serve maps to nothing. */
function ownerResources(reference: OwnerReference): ResourceType[] {
  const apiVersion = String(reference.apiVersion ?? "");
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  return resourceTypes.filter((type) => type.group === group && type.kind === reference.kind);
}

/**
 * admission.NewForbidden. The plugin formats its causes as "reason, err" with Go's %v, so an
 * authorizer that returned no error adds ", <nil>".
 */
function refusal(resource: ResourceType, name: string, cause: string) {
  return forbidden(`${qualifiedResource(resource)} ${goQuote(name)} is forbidden: ${cause}`, {
    name,
    ...(resource.group === "" ? {} : { group: resource.group }),
    kind: resource.plural,
  });
}
