// meta.k8s.io Table output, which kubectl asks for on `get`: the same columns KubeVirt's CRDs and
// the API server's printers declare, so `kubectl get vm` reads like it does on a real cluster.
import { field, stringField, type KubeObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";
import type { TableFormat } from "../http/negotiation.ts";

interface Column {
  name: string;
  type: "string" | "integer" | "date";
  description: string;
  priority?: number;
  format?: string;
  cell: (object: KubeObject) => string | number | null;
}

export type IncludeObject = "None" | "Metadata" | "Object";

/** Kubernetes' HumanDuration: "45s", "3m10s", "5h", "12d". */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const rest = seconds % 60;
    return rest === 0 ? `${minutes}m` : `${minutes}m${rest}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const rest = minutes % 60;
    return rest === 0 ? `${hours}h` : `${hours}h${rest}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 192) {
    const rest = hours % 24;
    return rest === 0 ? `${days}d` : `${days}d${rest}h`;
  }
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (days < 365 * 8) {
    const rest = days % 365;
    return rest === 0 ? `${years}y` : `${years}y${rest}d`;
  }
  return `${years}y`;
}

function age(object: KubeObject): string {
  const created = Date.parse(object.metadata.creationTimestamp);
  return Number.isNaN(created) ? "<unknown>" : humanDuration(Date.now() - created);
}

function conditionStatus(object: KubeObject, type: string): string | null {
  const conditions = field(object, "status", "conditions");
  if (!Array.isArray(conditions)) return null;
  const match = conditions.find((condition) => stringField(condition, "type") === type);
  return stringField(match, "status") ?? null;
}

const nameColumn: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  cell: (object) => object.metadata.name,
};
const ageColumn: Column = {
  name: "Age",
  type: "date",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  cell: age,
};

function podReady(object: KubeObject): string {
  const statuses = field(object, "status", "containerStatuses");
  const containers = field(object, "spec", "containers");
  const total = Array.isArray(containers) ? containers.length : 0;
  const ready = Array.isArray(statuses)
    ? statuses.filter((status) => field(status, "ready") === true).length
    : 0;
  return `${ready}/${total}`;
}

function podStatus(object: KubeObject): string {
  if (object.metadata.deletionTimestamp) return "Terminating";
  const statuses = field(object, "status", "containerStatuses");
  if (Array.isArray(statuses)) {
    for (const status of statuses) {
      const waiting = stringField(status, "state", "waiting", "reason");
      if (waiting) return waiting;
    }
  }
  return stringField(object, "status", "phase") ?? "Unknown";
}

function nodeStatus(object: KubeObject): string {
  const ready = conditionStatus(object, "Ready");
  const status = ready === "True" ? "Ready" : "NotReady";
  return field(object, "spec", "unschedulable") === true ? `${status},SchedulingDisabled` : status;
}

function nodeRoles(object: KubeObject): string {
  const roles = Object.keys(object.metadata.labels ?? {})
    .filter((label) => label.startsWith("node-role.kubernetes.io/"))
    .map((label) => label.slice("node-role.kubernetes.io/".length));
  return roles.length > 0 ? roles.sort().join(",") : "<none>";
}

function nodeAddress(object: KubeObject, type: string): string {
  const addresses = field(object, "status", "addresses");
  const match = Array.isArray(addresses)
    ? addresses.find((address) => stringField(address, "type") === type)
    : undefined;
  return stringField(match, "address") ?? "<none>";
}

const columnsByResource: Record<string, Column[]> = {
  "kubevirt.io/virtualmachines": [
    nameColumn,
    ageColumn,
    {
      name: "Status",
      type: "string",
      description: "Human Readable Status",
      cell: (o) => stringField(o, "status", "printableStatus") ?? null,
    },
    { name: "Ready", type: "string", description: "", cell: (o) => conditionStatus(o, "Ready") },
  ],
  "kubevirt.io/virtualmachineinstances": [
    nameColumn,
    ageColumn,
    {
      name: "Phase",
      type: "string",
      description: "",
      cell: (o) => stringField(o, "status", "phase") ?? null,
    },
    {
      name: "IP",
      type: "string",
      description: "",
      cell: (o) => stringField(o, "status", "interfaces", 0, "ipAddress") ?? null,
    },
    {
      name: "NodeName",
      type: "string",
      description: "",
      cell: (o) => stringField(o, "status", "nodeName") ?? null,
    },
    { name: "Ready", type: "string", description: "", cell: (o) => conditionStatus(o, "Ready") },
    {
      name: "Live-Migratable",
      type: "string",
      description: "",
      priority: 1,
      cell: (o) => conditionStatus(o, "LiveMigratable"),
    },
    {
      name: "Paused",
      type: "string",
      description: "",
      priority: 1,
      cell: (o) => conditionStatus(o, "Paused"),
    },
  ],
  "kubevirt.io/kubevirts": [
    nameColumn,
    ageColumn,
    {
      name: "Phase",
      type: "string",
      description: "",
      cell: (o) => stringField(o, "status", "phase") ?? null,
    },
  ],
  "/namespaces": [
    nameColumn,
    {
      name: "Status",
      type: "string",
      description: "The status of the namespace",
      cell: (o) => stringField(o, "status", "phase") ?? "Active",
    },
    ageColumn,
  ],
  "/secrets": [
    nameColumn,
    {
      name: "Type",
      type: "string",
      description: "The type of the secret",
      cell: (o) => stringField(o, "type") ?? "Opaque",
    },
    {
      name: "Data",
      type: "integer",
      description: "The number of entries in data",
      cell: (o) => Object.keys((o.data as object | undefined) ?? {}).length,
    },
    ageColumn,
  ],
  "/pods": [
    nameColumn,
    {
      name: "Ready",
      type: "string",
      description: "The aggregate readiness state of this pod for accepting traffic.",
      cell: podReady,
    },
    {
      name: "Status",
      type: "string",
      description: "The aggregate status of the containers in this pod.",
      cell: podStatus,
    },
    {
      name: "Restarts",
      type: "string",
      description: "The number of times the containers in this pod have been restarted.",
      cell: () => "0",
    },
    ageColumn,
    {
      name: "IP",
      type: "string",
      description: "The IP address assigned to the pod",
      priority: 1,
      cell: (o) => stringField(o, "status", "podIP") ?? "<none>",
    },
    {
      name: "Node",
      type: "string",
      description: "Name of the Node this Pod is scheduled on",
      priority: 1,
      cell: (o) => stringField(o, "spec", "nodeName") ?? "<none>",
    },
  ],
  "/nodes": [
    nameColumn,
    { name: "Status", type: "string", description: "The status of the node", cell: nodeStatus },
    { name: "Roles", type: "string", description: "The roles of the node", cell: nodeRoles },
    ageColumn,
    {
      name: "Version",
      type: "string",
      description: "Kubelet Version reported by the node.",
      cell: (o) => stringField(o, "status", "nodeInfo", "kubeletVersion") ?? "",
    },
    {
      name: "Internal-IP",
      type: "string",
      description: "List of internal IPs in the node",
      priority: 1,
      cell: (o) => nodeAddress(o, "InternalIP"),
    },
    {
      name: "Container-Runtime",
      type: "string",
      description: "Container runtime version reported by the node",
      priority: 1,
      cell: (o) => stringField(o, "status", "nodeInfo", "containerRuntimeVersion") ?? "",
    },
  ],
  "/events": [
    {
      name: "Last Seen",
      type: "string",
      description: "Time when this Event was last seen",
      cell: (o) => {
        const last = Date.parse(stringField(o, "lastTimestamp") ?? o.metadata.creationTimestamp);
        return Number.isNaN(last) ? "<unknown>" : humanDuration(Date.now() - last);
      },
    },
    {
      name: "Type",
      type: "string",
      description: "Type of this event (Normal, Warning)",
      cell: (o) => stringField(o, "type") ?? "",
    },
    {
      name: "Reason",
      type: "string",
      description: "Why the action was taken",
      cell: (o) => stringField(o, "reason") ?? "",
    },
    {
      name: "Object",
      type: "string",
      description: "The object that this event is about",
      cell: (o) =>
        `${(stringField(o, "involvedObject", "kind") ?? "").toLowerCase()}/${stringField(o, "involvedObject", "name") ?? ""}`,
    },
    {
      name: "Message",
      type: "string",
      description: "A human-readable description of the status of this operation",
      cell: (o) => stringField(o, "message") ?? "",
    },
  ],
  "networking.k8s.io/networkpolicies": [
    nameColumn,
    {
      name: "Pod-Selector",
      type: "string",
      description: "Selects the pods to which this NetworkPolicy object applies.",
      cell: (o) => selectorText(field(o, "spec", "podSelector")),
    },
    ageColumn,
  ],
  "coordination.k8s.io/leases": [
    nameColumn,
    {
      name: "Holder",
      type: "string",
      description: "holderIdentity contains the identity of the holder of a current lease.",
      cell: (o) => stringField(o, "spec", "holderIdentity") ?? "",
    },
    ageColumn,
  ],
};

/** metav1.FormatLabelSelector, as the API server's printer shows a selector: "<none>" for {}. */
function selectorText(selector: unknown): string {
  const parts: string[] = [];
  const matchLabels = field(selector, "matchLabels");
  if (matchLabels !== null && typeof matchLabels === "object") {
    for (const [key, value] of Object.entries(matchLabels).sort(([a], [b]) => a.localeCompare(b)))
      parts.push(`${key}=${String(value)}`);
  }
  const expressions = field(selector, "matchExpressions");
  for (const expression of Array.isArray(expressions) ? expressions : []) {
    const key = stringField(expression, "key") ?? "";
    const operator = stringField(expression, "operator") ?? "";
    const values = field(expression, "values");
    const list = Array.isArray(values) ? values.map(String).sort().join(",") : "";
    if (operator === "In") parts.push(`${key} in (${list})`);
    else if (operator === "NotIn") parts.push(`${key} notin (${list})`);
    else if (operator === "Exists") parts.push(key);
    else if (operator === "DoesNotExist") parts.push(`!${key}`);
  }
  return parts.length > 0 ? parts.join(",") : "<none>";
}

function rowObject(object: KubeObject, include: IncludeObject, apiVersion: string): unknown {
  if (include === "None") return undefined;
  if (include === "Object") return object;
  return { kind: "PartialObjectMetadata", apiVersion, metadata: object.metadata };
}

export function toTable(
  resource: ResourceType,
  objects: KubeObject[],
  options: { format: TableFormat; include: IncludeObject; listMeta: Record<string, unknown> },
): Record<string, unknown> {
  const columns = columnsByResource[resource.id] ?? [nameColumn, ageColumn];
  const apiVersion = options.format === "Table/v1" ? "meta.k8s.io/v1" : "meta.k8s.io/v1beta1";
  return {
    kind: "Table",
    apiVersion,
    metadata: options.listMeta,
    columnDefinitions: columns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? "",
      description: column.description,
      priority: column.priority ?? 0,
    })),
    rows: objects.map((object) => ({
      cells: columns.map((column) => column.cell(object)),
      object: rowObject(object, options.include, apiVersion),
    })),
  };
}
