// Picks the response representation from the Accept header: plain JSON, a meta.k8s.io Table (what
// kubectl get asks for) or PartialObjectMetadata. Protobuf is never chosen; clients fall back to JSON.
/** The meta.k8s.io versions of Table a client may ask for. */
export type TableFormat = "Table/v1" | "Table/v1beta1";

export type Representation =
  { kind: "json" } | { kind: "table"; format: TableFormat } | { kind: "metadata"; apiVersion: string };

export function negotiate(accept: string | undefined): Representation {
  if (!accept) return { kind: "json" };
  for (const clause of accept.split(",")) {
    const [type = "", ...paramParts] = clause.split(";").map((part) => part.trim());
    if (type !== "application/json" && type !== "*/*" && type !== "application/*") continue;
    const params = new Map(
      paramParts.map((part) => {
        const [key = "", value = ""] = part.split("=");
        return [key.trim(), value.trim()] as const;
      }),
    );
    const as = params.get("as");
    if (!as) return { kind: "json" };
    if (params.get("g") !== "meta.k8s.io") continue;
    const version = params.get("v");
    if (version !== "v1" && version !== "v1beta1") continue;
    if (as === "Table") return { kind: "table", format: version === "v1" ? "Table/v1" : "Table/v1beta1" };
    if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") {
      return { kind: "metadata", apiVersion: `meta.k8s.io/${version}` };
    }
  }
  return { kind: "json" };
}
