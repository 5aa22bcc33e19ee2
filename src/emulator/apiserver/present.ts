// One object in the representation the client asked for (Accept): as it is, as
// PartialObjectMetadata, or as a Table of one row. A GET and every event of a watch answer in the
// same shape, so both present their objects here.
import type { KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";
import type { Representation } from "../http/negotiation.ts";
import { toTable, type IncludeObject } from "./table.ts";

export function presentObject(
  resource: ResourceType,
  object: KubeObject,
  representation: Representation,
  include: IncludeObject,
): unknown {
  if (representation.kind === "table") {
    return toTable(resource, [object], {
      format: representation.format,
      include,
      listMeta: { resourceVersion: object.metadata.resourceVersion },
    });
  }
  if (representation.kind === "metadata") {
    return {
      kind: "PartialObjectMetadata",
      apiVersion: representation.apiVersion,
      metadata: object.metadata,
    };
  }
  return object;
}
